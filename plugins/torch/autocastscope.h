// SPDX-License-Identifier: Apache-2.0
#pragma once
// Mixed precision for the replay: enters bf16 (or any) autocast for CPU and CUDA the way
// torch.autocast does, and restores the previous state on exit. The autocast calls that
// differ between LibTorch versions go through torchcompat.h.

#include "torchcompat.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/ivalue.h>

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
        return {compat::autocastEnabled(at::kCPU), compat::autocastEnabled(at::kCUDA), compat::autocastDtype(at::kCPU),
                compat::autocastDtype(at::kCUDA)};
    }

private:
    static void apply(const AutocastState &state)
    {
        compat::setAutocastEnabled(at::kCPU, state.cpu);
        compat::setAutocastEnabled(at::kCUDA, state.cuda);
        compat::setAutocastDtype(at::kCPU, state.cpuType);
        compat::setAutocastDtype(at::kCUDA, state.cudaType);
    }

    AutocastState m_previous;
};

} // namespace peaklens::replay
