// SPDX-License-Identifier: Apache-2.0
#include "savedtensorpacking.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/saved_variable_hooks.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace peaklens::replay {

namespace {

// A saved tensor as the packing keeps it until the backward unpacks it.
class Packed
{
public:
    // Kept as saved.
    explicit Packed(torch::Tensor tensor)
        : m_tensor(std::move(tensor))
    {
    }

    static std::shared_ptr<const Packed> inBfloat16(const torch::Tensor &tensor)
    {
        auto packed = std::make_shared<Packed>(tensor.to(torch::kBFloat16));
        packed->m_dtype = tensor.scalar_type();
        return packed;
    }

    static std::shared_ptr<const Packed> onHost(const torch::Tensor &tensor)
    {
        auto packed = std::make_shared<Packed>(torch::Tensor());
        packed->m_device = tensor.device();
        if (tensor.device().is_cpu()) {
            // Outside LibTorch's allocator, as a GPU's host memory lies outside the GPU's.
            packed->m_bytes.reset(new std::byte[tensor.nbytes()]);
            packed->m_hostView = torch::from_blob(packed->m_bytes.get(), tensor.sizes(), tensor.options());
            packed->m_hostView.copy_(tensor);
        } else {
            packed->m_tensor = torch::empty(tensor.sizes(), tensor.options().device(torch::kCPU).pinned_memory(true));
            packed->m_tensor.copy_(tensor, /*non_blocking=*/true);
        }
        return packed;
    }

    torch::Tensor unpack() const
    {
        if (m_dtype)
            return m_tensor.to(*m_dtype);
        if (!m_device)
            return m_tensor;
        if (m_device->is_cpu())
            return m_hostView.clone();
        return m_tensor.to(*m_device, /*non_blocking=*/true);
    }

private:
    torch::Tensor m_tensor;
    std::optional<at::ScalarType> m_dtype; // in bfloat16: the dtype it is given back in
    std::optional<torch::Device> m_device; // on the host: the device it goes back to
    std::unique_ptr<std::byte[]> m_bytes;  // from the CPU: its bytes
    torch::Tensor m_hostView;              // those bytes as a tensor
};

} // namespace

struct SavedTensorPacking::State
{
    KeptForm form = KeptForm::AsMade;
    std::unordered_set<const void *> keptStorages;
    // Per tensor saved while it lives (its memory may go to another), its version and copy.
    struct Entry
    {
        c10::weak_intrusive_ptr<c10::TensorImpl> tensor;
        std::uint32_t version = 0;
        std::shared_ptr<const Packed> packed;
    };
    std::unordered_map<const c10::TensorImpl *, Entry> packed;

    std::shared_ptr<const Packed> pack(const torch::Tensor &tensor)
    {
        const bool asMade = tensor.numel() == 0 || !tensor.has_storage()
                            || keptStorages.contains(tensor.storage().data_ptr().get())
                            || (form == KeptForm::Bfloat16
                                && (!tensor.is_floating_point() || tensor.scalar_type() == torch::kBFloat16
                                    || tensor.scalar_type() == torch::kHalf));
        if (asMade)
            return std::make_shared<Packed>(tensor);
        const c10::TensorImpl *impl = tensor.unsafeGetTensorImpl();
        const std::uint32_t version = tensor._version();
        if (auto found = packed.find(impl);
            found != packed.end() && found->second.tensor.lock().get() == impl && found->second.version == version)
            return found->second.packed;
        const torch::Tensor data = tensor.detach();
        auto copy = form == KeptForm::Bfloat16 ? Packed::inBfloat16(data) : Packed::onHost(data);
        packed.insert_or_assign(impl, Entry{c10::weak_intrusive_ptr<c10::TensorImpl>(tensor.getIntrusivePtr()), version, copy});
        return copy;
    }
};

namespace {

thread_local SavedTensorPacking::State *t_packing = nullptr;

// The hooks of one saved tensor: packed as it is saved, by the packing of its thread.
class PackedTensor final : public torch::autograd::SavedVariableHooks
{
public:
    explicit PackedTensor(SavedTensorPacking::State &state)
        : m_state(&state)
    {
    }

    void call_pack_hook(const at::Tensor &tensor) override
    {
        m_packed = m_state->pack(tensor);
        m_state = nullptr; // the packing may end before the backward
    }

    at::Tensor call_unpack_hook() override { return m_packed->unpack(); }

private:
    SavedTensorPacking::State *m_state;
    std::shared_ptr<const Packed> m_packed;
};

// LibTorch's autograd engine, but for the hooks of a tensor saved while a packing lives.
class PackingEngine final : public torch::autograd::Engine
{
public:
    ~PackingEngine() override { stop(); }

    std::unique_ptr<torch::autograd::SavedVariableHooks> get_default_saved_variable_hooks() override
    {
        return t_packing ? std::make_unique<PackedTensor>(*t_packing) : nullptr;
    }

    static torch::autograd::Engine &instance()
    {
        static PackingEngine engine;
        return engine;
    }
};

} // namespace

SavedTensorPacking::SavedTensorPacking(KeptForm form, const std::vector<torch::Tensor> &kept)
    : m_state(std::make_unique<State>())
    , m_outer(t_packing)
{
    static std::once_flag installed;
    std::call_once(installed, [] { torch::autograd::set_default_engine_stub(&PackingEngine::instance); });
    m_state->form = form;
    for (const torch::Tensor &tensor : kept) {
        if (tensor.defined() && tensor.has_storage())
            m_state->keptStorages.insert(tensor.storage().data_ptr().get());
    }
    t_packing = m_state.get();
}

SavedTensorPacking::~SavedTensorPacking()
{
    t_packing = m_outer;
}

} // namespace peaklens::replay
