// SPDX-License-Identifier: Apache-2.0
#pragma once
// A model as the replay engine runs it: a sequence of stages (named layers) applied one
// after another, then a loss. Checkpointing toggles whole stages, or modules inside a
// stage (its parts: a GPT block's attn and mlp); the chain stages are the repeated
// blocks that "all", "every:K" and "sqrt" choose from.

#include "modelspec.h"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace peaklens::replay {

struct Stage
{
    // Runs part i of a stage on its input.
    using PartRunner = std::function<torch::Tensor(std::size_t, const torch::Tensor &)>;

    std::string path;   // "blocks.3"
    std::string kind;   // "GPTBlock"
    bool chain = false; // one of the repeated blocks
    std::function<torch::Tensor(const torch::Tensor &)> forward;
    std::vector<torch::Tensor> parameters;
    // The modules inside it that can be checkpointed on their own ("blocks.3.attn"), in
    // the order they run, and its forward written over them; forward is `compose` with
    // each part run plainly. Empty for a stage without parts.
    std::vector<Stage> parts;
    std::function<torch::Tensor(const torch::Tensor &, const PartRunner &)> compose;
    std::vector<torch::Tensor> buffers; // its modules' buffers (an attention mask)
    std::int64_t parameterBytes() const;
};

struct Batch
{
    torch::Tensor input;
    torch::Tensor target;
};

class ReplayModel
{
public:
    virtual ~ReplayModel() = default;

    const std::vector<Stage> &stages() const { return m_stages; }
    std::vector<torch::Tensor> parameters() const;
    // Its parameters and buffers: what a unit kept elsewhere leaves where it is.
    std::vector<torch::Tensor> state() const;
    // The container of the chain stages ("blocks") and its module type, for the layer tree.
    virtual std::pair<std::string, std::string> chainContainer() const = 0;

    // A batch drawn from the global generator (seeded by the runner).
    virtual Batch makeBatch(const torch::Device &device) const = 0;
    virtual torch::Tensor loss(const torch::Tensor &output, const torch::Tensor &target) const = 0;
    virtual std::string lossKind() const = 0;

protected:
    std::vector<Stage> m_stages;
};

// The first line of a LibTorch error, without its C++ backtrace; what() of others.
std::string errorText(const std::exception &error);

// Builds the model on the device with parameters drawn from the global generator.
// Throws Error with a sentence when a TorchScript block cannot be loaded.
std::unique_ptr<ReplayModel> buildModel(const ModelSpec &spec, const torch::Device &device);

} // namespace peaklens::replay
