// SPDX-License-Identifier: Apache-2.0
#include "checkpointfunction.h"

#include "autocastscope.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>

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

// Runs stages first..last of `unit` under grad (a recompute): inner units checkpointed
// again, and each stage's output but the last marked for where its backward begins.
torch::Tensor recompute(const std::vector<Stage> &stages, const CheckpointUnit &unit, torch::Tensor x, const StageMarks &marks);

struct Unit
{
    const std::vector<Stage> *stages;
    const CheckpointUnit *unit;
    const StageMarks *marks;
    bool marksForward; // false in a recompute, whose forwards are not the step's
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
            output = recompute(*u.stages, *u.unit, detached, *u.marks);
        }
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
