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

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction>
{
public:
    // `stage` is the address of the Stage, which outlives the step.
    static variable_list forward(AutogradContext *context, const torch::Tensor &input, at::TensorList parameters,
                                 std::int64_t stage)
    {
        (void)parameters; // passed so that autograd routes their gradients through this node
        context->save_for_backward({input});
        context->saved_data["stage"] = stage;
        auto generators = generatorsFor(input.device());
        context->saved_data["rng"] = c10::List<std::string>(captureStates(generators));
        context->saved_data["autocast"] = AutocastScope::capture().toIValue();
        return {reinterpret_cast<const Stage *>(stage)->forward(input)};
    }

    static variable_list backward(AutogradContext *context, variable_list gradOutputs)
    {
        const Stage &stage = *reinterpret_cast<const Stage *>(context->saved_data["stage"].toInt());
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
            output = stage.forward(detached);
        }
        restoreStates(generators, current);

        // Back-propagate through the recompute: parameters' gradients accumulate as they are
        // made, as without checkpointing; the input's is returned.
        if (output.requires_grad())
            torch::autograd::backward({output}, {gradOutputs.at(0)}, /*retain_graph=*/false, /*create_graph=*/false);

        // One gradient per forward input: the input, none for the parameters (accumulated
        // already), and none for the stage address.
        variable_list result;
        result.push_back(detached.requires_grad() ? detached.grad() : torch::Tensor());
        result.resize(1 + stage.parameters.size());
        result.emplace_back();
        return result;
    }
};

} // namespace

torch::Tensor runCheckpointed(const Stage &stage, const torch::Tensor &input)
{
    return CheckpointFunction::apply(input, at::TensorList(stage.parameters), reinterpret_cast<std::int64_t>(&stage))[0];
}

} // namespace peaklens::replay
