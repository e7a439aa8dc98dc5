#pragma once
// Mixed precision for the replay: enters bf16 (or any) autocast for CPU and CUDA the way
// torch.autocast does, and restores the previous state on exit. Wraps the autocast API,
// which changed names in LibTorch 2.4.

#include <ATen/autocast_mode.h>
#include <ATen/core/ivalue.h>
#include <torch/version.h>

namespace peaklens::replay {

struct AutocastState
{
    bool cpu = false;
    bool cuda = false;
    at::ScalarType cpuType = at::kBFloat16;
    at::ScalarType cudaType = at::kHalf;

    c10::IValue toIValue() const
    {
        return c10::List<int64_t>({cpu, cuda, static_cast<int64_t>(cpuType), static_cast<int64_t>(cudaType)});
    }
    static AutocastState fromIValue(const c10::IValue &value)
    {
        const auto list = value.toIntList();
        return {list[0] != 0, list[1] != 0, static_cast<at::ScalarType>(list[2]), static_cast<at::ScalarType>(list[3])};
    }
};

class AutocastScope
{
public:
    explicit AutocastScope(const AutocastState &state)
        : m_previous(capture())
    {
        apply(state);
        at::autocast::increment_nesting();
    }
    ~AutocastScope()
    {
        // Casts are cached only while autocast is on; the outermost exit drops them.
        if (at::autocast::decrement_nesting() == 0)
            at::autocast::clear_cache();
        apply(m_previous);
    }
    AutocastScope(const AutocastScope &) = delete;
    AutocastScope &operator=(const AutocastScope &) = delete;

    static AutocastState capture()
    {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
        return {at::autocast::is_autocast_enabled(at::kCPU), at::autocast::is_autocast_enabled(at::kCUDA),
                at::autocast::get_autocast_dtype(at::kCPU), at::autocast::get_autocast_dtype(at::kCUDA)};
#else
        return {at::autocast::is_cpu_enabled(), at::autocast::is_enabled(), at::autocast::get_autocast_cpu_dtype(),
                at::autocast::get_autocast_gpu_dtype()};
#endif
    }

private:
    static void apply(const AutocastState &state)
    {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
        at::autocast::set_autocast_enabled(at::kCPU, state.cpu);
        at::autocast::set_autocast_enabled(at::kCUDA, state.cuda);
        at::autocast::set_autocast_dtype(at::kCPU, state.cpuType);
        at::autocast::set_autocast_dtype(at::kCUDA, state.cudaType);
#else
        at::autocast::set_cpu_enabled(state.cpu);
        at::autocast::set_enabled(state.cuda);
        at::autocast::set_autocast_cpu_dtype(state.cpuType);
        at::autocast::set_autocast_gpu_dtype(state.cudaType);
#endif
    }

    AutocastState m_previous;
};

} // namespace peaklens::replay
