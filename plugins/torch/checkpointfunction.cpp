// SPDX-License-Identifier: Apache-2.0
#include "checkpointfunction.h"

#include "autocastscope.h"

#include "core/error.h"
#include "core/plan/checkpointstrategy.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace peaklens::replay {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The generators a stage's random ops draw from: the CPU one, and the CUDA one of the
// input's device when it lives on a GPU.
std::vector<at::Generator> generatorsFor(const torch::Device &device)
{
    std::vector<at::Generator> generators{at::detail::getDefaultCPUGenerator()};
    if (device.is_cuda())
        generators.push_back(at::globalContext().defaultGenerator(device));
    return generators;
}

// Generator states as bytes, kept outside LibTorch's allocator: they are the checkpoint's
// bookkeeping, not the model's memory, and a CPU run counts every allocator byte.
std::vector<std::string> captureStates(std::vector<at::Generator> &generators)
{
    std::vector<std::string> states;
    for (at::Generator &generator : generators) {
        std::lock_guard<std::mutex> lock(generator.mutex());
        const torch::Tensor state = generator.get_state().contiguous();
        states.emplace_back(static_cast<const char *>(state.data_ptr()), state.nbytes());
    }
    return states;
}

void restoreStates(std::vector<at::Generator> &generators, const std::vector<std::string> &states)
{
    for (std::size_t i = 0; i < generators.size(); ++i) {
        std::lock_guard<std::mutex> lock(generators[i].mutex());
        std::string bytes = states[i];
        generators[i].set_state(torch::from_blob(bytes.data(), {static_cast<std::int64_t>(bytes.size())}, torch::kUInt8));
    }
}

// ---- Selective checkpointing: a dispatch mode under autograd ------------------------
//
// A unit with a per-op policy keeps the outputs of its listed operators from its forward to
// its recompute, where those operators return what they returned then instead of running
// again; autograd, above the mode, still records each for the backward. This is what
// PyTorch's selective checkpoint contexts do with a Python dispatch mode. LibTorch offers
// C++ no such mode, so the replay registers a fallback kernel on a dispatch key that sits
// under autograd and that nothing in a LibTorch process without Python uses, and includes
// that key on the thread while the unit runs: every operator the unit's forward and
// recompute run passes through the fallback, which names it as a policy does
// ("aten.mm.default"). The key is the C++ fake-tensor mode's; should LibTorch ever handle
// it itself, the replay says so instead of applying the policy.
//
// The mode keeps what PyTorch's keeps, and two cases stay exact: an operator that updates
// a kept output in place later in the forward (a linear's bias added to its matrix
// product; PyTorch refuses that by default) is not applied a second time in the
// recompute, and a kept random operator's call leaves the random number generators where
// its own call left them, so the operators after it draw what they drew in the forward.

constexpr c10::DispatchKey kSelectiveKey = c10::DispatchKey::Fake;

struct CachedCall
{
    std::vector<c10::IValue> outputs;
    std::vector<std::string> generatorStates; // after a random operator's call, else empty
};

struct OperatorCache
{
    const std::vector<std::string> *saved = nullptr; // the unit's, sorted
    std::map<std::string, std::deque<CachedCall>, std::less<>> calls;
    // Per storage of a cached output, the in-place updates the forward made to it after
    // caching it, which the recompute skips.
    std::unordered_map<const c10::StorageImpl *, std::size_t> updates;
    bool recomputing = false;
    std::string unitPath;
};

thread_local OperatorCache *activeCache = nullptr;

const std::string &policyName(const c10::OperatorHandle &op)
{
    thread_local std::unordered_map<const void *, std::string> names;
    const auto known = names.find(&op.schema());
    if (known != names.end())
        return known->second;
    const c10::OperatorName &name = op.operator_name();
    return names
        .emplace(&op.schema(), operatorOverload(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name))
        .first->second;
}

// The storage an in-place operator updates (its first argument, written through), or null.
const c10::StorageImpl *updatedStorage(const c10::FunctionSchema &schema, const torch::jit::Stack &stack)
{
    const auto &arguments = schema.arguments();
    if (arguments.empty() || !arguments[0].alias_info() || !arguments[0].alias_info()->isWrite() || schema.returns().size() != 1)
        return nullptr;
    const c10::IValue &self = stack[stack.size() - arguments.size()];
    return self.isTensor() && self.toTensor().has_storage() ? self.toTensor().storage().unsafeGetStorageImpl() : nullptr;
}

void selectiveFallback(const c10::OperatorHandle &op, c10::DispatchKeySet keys, torch::jit::Stack *stack)
{
    const c10::DispatchKeySet below = keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kSelectiveKey);
    // The operators a kernel calls run below the mode, as under PyTorch's: it sees only the
    // outermost operator under autograd.
    const c10::impl::ExcludeDispatchKeyGuard outermostOnly(kSelectiveKey);
    OperatorCache *cache = activeCache;
    if (!cache) {
        op.redispatchBoxed(below, stack);
        return;
    }
    const c10::FunctionSchema &schema = op.schema();
    const std::size_t arguments = schema.arguments().size();
    if (const c10::StorageImpl *storage = updatedStorage(schema, *stack)) {
        const auto cached = cache->updates.find(storage);
        if (cached != cache->updates.end()) {
            if (!cache->recomputing) {
                ++cached->second;
            } else if (cached->second > 0) {
                --cached->second; // applied in the forward, cached with the output
                c10::IValue self = (*stack)[stack->size() - arguments];
                torch::jit::drop(*stack, arguments);
                stack->push_back(std::move(self));
                return;
            }
        }
    }
    // An operator writing into an argument (in place, or out=) makes no output of its own
    // to keep, and a factory's block is filled in place after it (keptByPolicies).
    const bool writes = std::any_of(schema.arguments().begin(), schema.arguments().end(), [](const c10::Argument &argument) {
        return argument.alias_info() && argument.alias_info()->isWrite();
    });
    const std::string &name = policyName(op);
    const bool saved = !writes && keptByPolicies(name) && std::binary_search(cache->saved->begin(), cache->saved->end(), name);
    if (!saved) {
        op.redispatchBoxed(below, stack);
        return;
    }
    const bool random = op.hasTag(at::Tag::nondeterministic_seeded);
    if (cache->recomputing) {
        auto calls = cache->calls.find(name);
        if (calls == cache->calls.end() || calls->second.empty())
            throw Error("the recompute of " + cache->unitPath + " ran " + name + " more often than its forward did");
        CachedCall call = std::move(calls->second.front());
        calls->second.pop_front();
        torch::jit::drop(*stack, arguments);
        for (c10::IValue &output : call.outputs)
            stack->push_back(std::move(output));
        if (random) {
            auto generators = generatorsFor(stack->back().isTensor() ? stack->back().toTensor().device() : torch::kCPU);
            restoreStates(generators, call.generatorStates);
        }
        return;
    }
    op.redispatchBoxed(below, stack);
    CachedCall call;
    for (auto it = stack->end() - static_cast<std::ptrdiff_t>(schema.returns().size()); it != stack->end(); ++it) {
        if (it->isTensor()) {
            const torch::Tensor &output = it->toTensor();
            if (output.has_storage())
                cache->updates.try_emplace(output.storage().unsafeGetStorageImpl(), 0);
            call.outputs.emplace_back(output.detach());
        } else {
            call.outputs.push_back(*it);
        }
    }
    if (random) {
        auto generators = generatorsFor(stack->back().isTensor() ? stack->back().toTensor().device() : torch::kCPU);
        call.generatorStates = captureStates(generators);
    }
    cache->calls[name].push_back(std::move(call));
}

// Registers the fallback once; throws when the key is taken.
void registerSelectiveMode()
{
    static const bool registered = [] {
        if (c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(kSelectiveKey))
            return false;
        static auto *const library = new torch::Library(torch::Library::IMPL, "_", kSelectiveKey, __FILE__, __LINE__);
        library->fallback(torch::CppFunction::makeFromBoxedFunction<&selectiveFallback>());
        return true;
    }();
    if (!registered)
        throw Error(std::string("this LibTorch handles the dispatch key ") + c10::toString(kSelectiveKey)
                    + " itself, so the replay cannot apply a per-op policy; a real script's rerun "
                      "(PEAKLENS_CHECKPOINT, through the Python helper) can.");
}

// While it lives, the thread's operators pass through `cache` (none: as without it).
class SelectiveScope
{
public:
    explicit SelectiveScope(OperatorCache *cache)
        : m_previous(activeCache)
    {
        activeCache = cache;
        if (cache)
            m_include.emplace(kSelectiveKey);
    }
    ~SelectiveScope() { activeCache = m_previous; }
    SelectiveScope(const SelectiveScope &) = delete;
    SelectiveScope &operator=(const SelectiveScope &) = delete;

private:
    OperatorCache *m_previous;
    std::optional<c10::impl::IncludeDispatchKeyGuard> m_include;
};

// Runs stages first..last of `unit` under grad (a recompute): inner units checkpointed
// again, and each stage's output but the last marked for where its backward begins.
torch::Tensor recompute(const std::vector<Stage> &stages, const CheckpointUnit &unit, torch::Tensor x, const StageMarks &marks);

struct Unit
{
    const std::vector<Stage> *stages;
    const CheckpointUnit *unit;
    const StageMarks *marks;
    bool marksForward;                         // false in a recompute, whose forwards are not the step's
    std::shared_ptr<OperatorCache> cache = {}; // a per-op policy's
};

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction>
{
public:
    // `unit` is the address of a Unit, which outlives the step.
    static variable_list forward(AutogradContext *context, const torch::Tensor &input, at::TensorList parameters,
                                 std::int64_t unit)
    {
        (void)parameters; // passed so that autograd routes their gradients through this node
        const Unit &u = *reinterpret_cast<const Unit *>(unit);
        context->save_for_backward({input});
        context->saved_data["unit"] = unit;
        auto generators = generatorsFor(input.device());
        context->saved_data["rng"] = c10::List<std::string>(captureStates(generators));
        context->saved_data["autocast"] = AutocastScope::capture().toIValue();
        torch::Tensor x = input;
        SelectiveScope selective(u.cache.get());
        for (std::size_t k = u.unit->first; k <= u.unit->last; ++k) {
            if (u.marksForward)
                u.marks->forwardBegins(k);
            x = (*u.stages)[k].forward(x);
            if (u.marksForward)
                u.marks->forwardEnds();
        }
        return {x};
    }

    static variable_list backward(AutogradContext *context, variable_list gradOutputs)
    {
        const Unit &u = *reinterpret_cast<const Unit *>(context->saved_data["unit"].toInt());
        const torch::Tensor input = context->get_saved_variables().at(0);
        torch::Tensor detached = input.detach();
        detached.requires_grad_(input.requires_grad());

        // Recompute with the forward's random numbers, then leave the generators as found
        // so that the rest of the backward draws what it would have without checkpointing.
        auto generators = generatorsFor(input.device());
        const auto current = captureStates(generators);
        const auto savedStates = context->saved_data["rng"].toList();
        std::vector<std::string> forwardStates;
        for (std::size_t i = 0; i < savedStates.size(); ++i)
            forwardStates.push_back(savedStates.get(i).toStringRef());
        restoreStates(generators, forwardStates);
        torch::Tensor output;
        {
            torch::AutoGradMode enableGrad(true);
            AutocastScope autocast(AutocastState::fromIValue(context->saved_data["autocast"]));
            if (u.cache)
                u.cache->recomputing = true;
            SelectiveScope selective(u.cache.get());
            output = recompute(*u.stages, *u.unit, detached, *u.marks);
        }
        if (u.cache)
            u.cache->calls.clear(); // what the recompute did not take back
        restoreStates(generators, current);

        // Back-propagate through the recompute: parameters' gradients accumulate as they are
        // made, as without checkpointing; the input's is returned.
        if (output.requires_grad())
            torch::autograd::backward({output}, {gradOutputs.at(0)}, /*retain_graph=*/false, /*create_graph=*/false);

        // One gradient per forward input: the input, none for the parameters (accumulated
        // already), and none for the unit's address.
        std::size_t parameters = 0;
        for (std::size_t k = u.unit->first; k <= u.unit->last; ++k)
            parameters += (*u.stages)[k].parameters.size();
        variable_list result;
        result.push_back(detached.requires_grad() ? detached.grad() : torch::Tensor());
        result.resize(1 + parameters);
        result.emplace_back();
        return result;
    }
};

// The unit's bookkeeping lives as long as the graph node that reads it: a hook on the
// output holds it.
torch::Tensor checkpointed(Unit unit, const torch::Tensor &input)
{
    std::vector<torch::Tensor> parameters;
    for (std::size_t k = unit.unit->first; k <= unit.unit->last; ++k) {
        const auto &own = (*unit.stages)[k].parameters;
        parameters.insert(parameters.end(), own.begin(), own.end());
    }
    if (!unit.unit->saved.empty()) {
        registerSelectiveMode();
        unit.cache = std::make_shared<OperatorCache>();
        unit.cache->saved = &unit.unit->saved;
        unit.cache->unitPath = (*unit.stages)[unit.unit->first].path;
    }
    auto owned = std::make_shared<Unit>(unit);
    torch::Tensor output =
        CheckpointFunction::apply(input, at::TensorList(parameters), reinterpret_cast<std::int64_t>(owned.get()))[0];
    if (output.requires_grad())
        output.register_hook([owned](const torch::Tensor &) {});
    return output;
}

torch::Tensor recompute(const std::vector<Stage> &stages, const CheckpointUnit &unit, torch::Tensor x, const StageMarks &marks)
{
    auto inner = unit.inner.begin();
    for (std::size_t k = unit.first; k <= unit.last; ++k) {
        if (inner != unit.inner.end() && inner->first == k) {
            x = checkpointed(Unit{&stages, &*inner, &marks, false}, x);
            k = inner->last;
            ++inner;
        } else {
            x = stages[k].forward(x);
        }
        if (k != unit.last && x.requires_grad()) {
            const StageMarks *m = &marks;
            x.register_hook([m, k](const torch::Tensor &) { m->backwardBegins(k); });
        }
    }
    return x;
}

} // namespace

torch::Tensor runCheckpointed(const std::vector<Stage> &stages, const CheckpointUnit &unit, const torch::Tensor &input,
                              const StageMarks &marks)
{
    return checkpointed(Unit{&stages, &unit, &marks, true}, input);
}

} // namespace peaklens::replay
