// SPDX-License-Identifier: Apache-2.0
#include "replaymodel.h"

#include "core/error.h"

#include <torch/script.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace peaklens::replay {

namespace nn = torch::nn;

std::int64_t Stage::parameterBytes() const
{
    std::int64_t bytes = 0;
    for (const torch::Tensor &parameter : parameters)
        bytes += static_cast<std::int64_t>(parameter.nbytes());
    return bytes;
}

std::vector<torch::Tensor> ReplayModel::parameters() const
{
    std::vector<torch::Tensor> all;
    for (const Stage &stage : m_stages)
        all.insert(all.end(), stage.parameters.begin(), stage.parameters.end());
    return all;
}

std::vector<torch::Tensor> ReplayModel::state() const
{
    std::vector<torch::Tensor> all = parameters();
    for (const Stage &stage : m_stages)
        all.insert(all.end(), stage.buffers.begin(), stage.buffers.end());
    return all;
}

namespace {

// ---- GPT-style decoder -------------------------------------------------------------

struct CausalSelfAttentionImpl : nn::Module
{
    CausalSelfAttentionImpl(const ModelSpec &spec)
        : heads(spec.heads)
        , qkv(register_module("qkv", nn::Linear(spec.dModel, 3 * spec.dModel)))
        , proj(register_module("proj", nn::Linear(spec.dModel, spec.dModel)))
        , attentionDropout(register_module("attn_dropout", nn::Dropout(spec.dropout)))
        , residualDropout(register_module("resid_dropout", nn::Dropout(spec.dropout)))
        , future(register_buffer("future", torch::ones({spec.seq, spec.seq}, torch::kBool).triu(1)))
    {
    }

    torch::Tensor forward(const torch::Tensor &x)
    {
        const auto batch = x.size(0), time = x.size(1), width = x.size(2);
        const auto headWidth = width / heads;
        auto parts = qkv(x).split(width, 2);
        auto split = [&](const torch::Tensor &t) { return t.view({batch, time, heads, headWidth}).transpose(1, 2); };
        const torch::Tensor q = split(parts[0]), k = split(parts[1]), v = split(parts[2]);
        auto scores = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(headWidth)));
        scores = scores.masked_fill(future.slice(0, 0, time).slice(1, 0, time), -std::numeric_limits<float>::infinity());
        auto attention = attentionDropout(torch::softmax(scores, -1));
        auto y = torch::matmul(attention, v).transpose(1, 2).contiguous().view({batch, time, width});
        return residualDropout(proj(y));
    }

    std::int64_t heads;
    nn::Linear qkv, proj;
    nn::Dropout attentionDropout, residualDropout;
    torch::Tensor future;
};
TORCH_MODULE(CausalSelfAttention);

struct GptMlpImpl : nn::Module
{
    GptMlpImpl(const ModelSpec &spec)
        : fc(register_module("fc", nn::Linear(spec.dModel, 4 * spec.dModel)))
        , proj(register_module("proj", nn::Linear(4 * spec.dModel, spec.dModel)))
        , dropout(register_module("dropout", nn::Dropout(spec.dropout)))
    {
    }
    torch::Tensor forward(const torch::Tensor &x) { return dropout(proj(torch::gelu(fc(x)))); }

    nn::Linear fc, proj;
    nn::Dropout dropout;
};
TORCH_MODULE(GptMlp);

// A block's parts as a stage's: each child module by name, with its parameters.
template<typename Module>
Stage partStage(const std::string &path, const std::string &kind, Module module)
{
    return Stage{path, kind, false, [module](const torch::Tensor &x) mutable { return module->forward(x); }, module->parameters(),
                 {},   {}};
}

struct GptBlockImpl : nn::Module
{
    GptBlockImpl(const ModelSpec &spec)
        : ln1(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({spec.dModel}))))
        , attn(register_module("attn", CausalSelfAttention(spec)))
        , ln2(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({spec.dModel}))))
        , mlp(register_module("mlp", GptMlp(spec)))
    {
    }

    std::vector<Stage> parts(const std::string &path) const
    {
        return {partStage(path + ".ln1", "LayerNorm", ln1), partStage(path + ".attn", "CausalSelfAttention", attn),
                partStage(path + ".ln2", "LayerNorm", ln2), partStage(path + ".mlp", "MLP", mlp)};
    }

    static torch::Tensor compose(const torch::Tensor &input, const Stage::PartRunner &run)
    {
        torch::Tensor x = input + run(1, run(0, input));
        return x + run(3, run(2, x));
    }

    nn::LayerNorm ln1;
    CausalSelfAttention attn;
    nn::LayerNorm ln2;
    GptMlp mlp;
};
TORCH_MODULE(GptBlock);

struct EmbeddingImpl : nn::Module
{
    EmbeddingImpl(const ModelSpec &spec)
        : tokens(register_module("wte", nn::Embedding(spec.vocab, spec.dModel)))
        , positions(register_module("wpe", nn::Embedding(spec.seq, spec.dModel)))
        , dropout(register_module("dropout", nn::Dropout(spec.dropout)))
    {
    }

    torch::Tensor forward(const torch::Tensor &ids)
    {
        const auto where = torch::arange(ids.size(1), torch::TensorOptions().dtype(torch::kLong).device(ids.device()));
        return dropout(tokens(ids) + positions(where));
    }

    nn::Embedding tokens, positions;
    nn::Dropout dropout;
};
TORCH_MODULE(Embedding);

// ---- MLP and CNN blocks --------------------------------------------------------------

struct MlpBlockImpl : nn::Module
{
    MlpBlockImpl(const ModelSpec &spec)
        : linear(register_module("linear", nn::Linear(spec.dModel, spec.dModel)))
        , act(register_module("act", nn::GELU()))
        , dropout(register_module("dropout", nn::Dropout(spec.dropout)))
    {
    }

    std::vector<Stage> parts(const std::string &path) const
    {
        return {partStage(path + ".linear", "Linear", linear), partStage(path + ".act", "GELU", act),
                partStage(path + ".dropout", "Dropout", dropout)};
    }

    static torch::Tensor compose(const torch::Tensor &x, const Stage::PartRunner &run) { return run(2, run(1, run(0, x))); }

    nn::Linear linear;
    nn::GELU act;
    nn::Dropout dropout;
};
TORCH_MODULE(MlpBlock);

nn::Conv2d conv3x3(std::int64_t in, std::int64_t out)
{
    return nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
}

struct ResidualBlockImpl : nn::Module
{
    ResidualBlockImpl(const ModelSpec &spec)
        : conv1(register_module("conv1", conv3x3(spec.channels, spec.channels)))
        , bn1(register_module("bn1", nn::BatchNorm2d(spec.channels)))
        , dropout(register_module("dropout", nn::Dropout(spec.dropout)))
        , conv2(register_module("conv2", conv3x3(spec.channels, spec.channels)))
        , bn2(register_module("bn2", nn::BatchNorm2d(spec.channels)))
    {
    }

    std::vector<Stage> parts(const std::string &path) const
    {
        return {partStage(path + ".conv1", "Conv2d", conv1), partStage(path + ".bn1", "BatchNorm2d", bn1),
                partStage(path + ".dropout", "Dropout", dropout), partStage(path + ".conv2", "Conv2d", conv2),
                partStage(path + ".bn2", "BatchNorm2d", bn2)};
    }

    static torch::Tensor compose(const torch::Tensor &x, const Stage::PartRunner &run)
    {
        torch::Tensor y = run(2, torch::relu(run(1, run(0, x))));
        return torch::relu(x + run(4, run(3, y)));
    }

    nn::Conv2d conv1;
    nn::BatchNorm2d bn1;
    nn::Dropout dropout;
    nn::Conv2d conv2;
    nn::BatchNorm2d bn2;
};
TORCH_MODULE(ResidualBlock);

// ---- the models ------------------------------------------------------------------------

class BuiltinModel : public ReplayModel
{
public:
    BuiltinModel(const ModelSpec &spec, std::string container, std::string containerKind)
        : m_spec(spec)
        , m_container(std::move(container))
        , m_containerKind(std::move(containerKind))
    {
    }

    std::pair<std::string, std::string> chainContainer() const override { return {m_container, m_containerKind}; }
    std::string lossKind() const override { return "CrossEntropyLoss"; }

    torch::Tensor loss(const torch::Tensor &output, const torch::Tensor &target) const override
    {
        return torch::cross_entropy_loss(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
    }

    // Registers the module as a stage; `path` is also its name under the root.
    template<typename Holder>
    void addStage(const std::string &path, const std::string &kind, bool chain, Holder module, const torch::Device &device)
    {
        module->to(device);
        module->train();
        m_modules.push_back(module.ptr());
        Stage stage{path, kind, chain, {}, module->parameters(), {}, {}, module->buffers()};
        if constexpr (requires { module->parts(path); }) {
            stage.parts = module->parts(path);
            stage.compose = [](const torch::Tensor &x, const Stage::PartRunner &run) { return Holder::Impl::compose(x, run); };
            stage.forward = [parts = stage.parts](const torch::Tensor &x) {
                return Holder::Impl::compose(x,
                                             [&parts](std::size_t i, const torch::Tensor &in) { return parts[i].forward(in); });
            };
        } else {
            stage.forward = [module](const torch::Tensor &x) mutable { return module->forward(x); };
        }
        m_stages.push_back(std::move(stage));
    }

protected:
    ModelSpec m_spec;

private:
    std::string m_container, m_containerKind;
    std::vector<std::shared_ptr<nn::Module>> m_modules;
};

class GptModel final : public BuiltinModel
{
public:
    GptModel(const ModelSpec &spec, const torch::Device &device)
        : BuiltinModel(spec, "blocks", "ModuleList")
    {
        addStage("embed", "Embedding", false, Embedding(spec), device);
        for (std::int64_t i = 0; i < spec.layers; ++i)
            addStage("blocks." + std::to_string(i), "GPTBlock", true, GptBlock(spec), device);
        addStage("ln_f", "LayerNorm", false, nn::LayerNorm(nn::LayerNormOptions({spec.dModel})), device);
        addStage("head", "Linear", false, nn::Linear(nn::LinearOptions(spec.dModel, spec.vocab).bias(false)), device);
    }

    Batch makeBatch(const torch::Device &device) const override
    {
        const auto options = torch::TensorOptions().dtype(torch::kLong).device(device);
        return {torch::randint(m_spec.vocab, {m_spec.batch, m_spec.seq}, options),
                torch::randint(m_spec.vocab, {m_spec.batch, m_spec.seq}, options)};
    }
};

class MlpModel final : public BuiltinModel
{
public:
    MlpModel(const ModelSpec &spec, const torch::Device &device)
        : BuiltinModel(spec, "layers", "Sequential")
    {
        for (std::int64_t i = 0; i < spec.layers; ++i)
            addStage("layers." + std::to_string(i), "MLPBlock", true, MlpBlock(spec), device);
        addStage("head", "Linear", false, nn::Linear(spec.dModel, spec.classes), device);
    }

    Batch makeBatch(const torch::Device &device) const override
    {
        return {torch::randn({m_spec.batch, m_spec.dModel}, torch::TensorOptions().device(device)),
                torch::randint(m_spec.classes, {m_spec.batch}, torch::TensorOptions().dtype(torch::kLong).device(device))};
    }
};

struct CnnHeadImpl : nn::Module
{
    CnnHeadImpl(const ModelSpec &spec)
        : linear(register_module("fc", nn::Linear(spec.channels, spec.classes)))
    {
    }
    torch::Tensor forward(const torch::Tensor &x) { return linear(x.mean({2, 3})); }
    nn::Linear linear;
};
TORCH_MODULE(CnnHead);

struct CnnStemImpl : nn::Module
{
    CnnStemImpl(const ModelSpec &spec)
        : conv(register_module("conv", conv3x3(3, spec.channels)))
        , bn(register_module("bn", nn::BatchNorm2d(spec.channels)))
    {
    }
    torch::Tensor forward(const torch::Tensor &x) { return torch::relu(bn(conv(x))); }
    nn::Conv2d conv;
    nn::BatchNorm2d bn;
};
TORCH_MODULE(CnnStem);

class CnnModel final : public BuiltinModel
{
public:
    CnnModel(const ModelSpec &spec, const torch::Device &device)
        : BuiltinModel(spec, "blocks", "Sequential")
    {
        addStage("stem", "ConvBNReLU", false, CnnStem(spec), device);
        for (std::int64_t i = 0; i < spec.layers; ++i)
            addStage("blocks." + std::to_string(i), "ResidualBlock", true, ResidualBlock(spec), device);
        addStage("head", "PoolLinear", false, CnnHead(spec), device);
    }

    Batch makeBatch(const torch::Device &device) const override
    {
        return {torch::randn({m_spec.batch, 3, m_spec.image, m_spec.image}, torch::TensorOptions().device(device)),
                torch::randint(m_spec.classes, {m_spec.batch}, torch::TensorOptions().dtype(torch::kLong).device(device))};
    }
};

// ---- TorchScript blocks ----------------------------------------------------------------

class TorchScriptModel final : public ReplayModel
{
public:
    TorchScriptModel(const ModelSpec &spec, const torch::Device &device)
        : m_spec(spec)
    {
        for (const ScriptBlock &block : spec.blocks) {
            auto module = std::make_shared<torch::jit::Module>();
            try {
                *module = torch::jit::load(block.file, device);
            } catch (const c10::Error &error) {
                throw FileError(block.file, "cannot load this TorchScript block: " + errorText(error));
            }
            module->train(true);
            Stage stage{block.name, module->type()->name() ? module->type()->name()->name() : "ScriptModule",
                        true,       [module](const torch::Tensor &x) { return module->forward({x}).toTensor(); },
                        {},         {},
                        {}};
            for (const torch::Tensor &parameter : module->parameters()) {
                parameter.requires_grad_(true);
                stage.parameters.push_back(parameter);
            }
            for (const torch::Tensor &buffer : module->buffers())
                stage.buffers.push_back(buffer);
            m_stages.push_back(std::move(stage));
        }
        markChain();
    }

    std::pair<std::string, std::string> chainContainer() const override { return {m_container, "Sequential"}; }

    Batch makeBatch(const torch::Device &device) const override
    {
        const auto options = torch::TensorOptions().device(device);
        if (m_spec.integerInput)
            return {torch::randint(m_spec.classes, m_spec.inputShape, options.dtype(torch::kLong)), {}};
        return {torch::randn(m_spec.inputShape, options), {}};
    }

    // MSE pulls the output towards zero; cross-entropy draws fixed class targets shaped
    // like the output without its last (class) dimension.
    torch::Tensor loss(const torch::Tensor &output, const torch::Tensor &) const override
    {
        if (m_spec.loss == "mse")
            return output.to(torch::kFloat).pow(2).mean();
        if (!m_target.defined() || m_target.numel() * output.size(-1) != output.numel()) {
            torch::NoGradGuard noGrad;
            auto generator = at::make_generator<at::CPUGeneratorImpl>(m_spec.seed + 1);
            m_target = torch::randint(output.size(-1), output.numel() / output.size(-1), generator,
                                      torch::TensorOptions().dtype(torch::kLong))
                           .to(output.device());
        }
        return torch::cross_entropy_loss(output.reshape({-1, output.size(-1)}), m_target);
    }

    std::string lossKind() const override { return m_spec.loss == "mse" ? "MSELoss" : "CrossEntropyLoss"; }

private:
    // The chain is the blocks numbered under one name, as the planner's default chain is
    // (core/plan/costmodel.h): with "embed", "blocks.0" .. "blocks.5", "head", the six
    // blocks. The name with the most numbered blocks wins; without any, every block is
    // the chain.
    void markChain()
    {
        std::map<std::string, std::size_t> numbered;
        const auto containerOf = [](const std::string &name) -> std::optional<std::string> {
            const auto dot = name.rfind('.');
            if (dot == std::string::npos || dot + 1 == name.size()
                || !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dot) + 1, name.end(),
                                [](char c) { return c >= '0' && c <= '9'; }))
                return std::nullopt;
            return name.substr(0, dot);
        };
        for (const Stage &stage : m_stages) {
            if (const auto container = containerOf(stage.path))
                ++numbered[*container];
        }
        if (numbered.empty())
            return;
        m_container = std::max_element(numbered.begin(), numbered.end(), [](const auto &a, const auto &b) {
                          return a.second < b.second;
                      })->first;
        for (Stage &stage : m_stages)
            stage.chain = containerOf(stage.path) == m_container;
    }

    ModelSpec m_spec;
    std::string m_container;
    mutable torch::Tensor m_target;
};

} // namespace

std::string errorText(const std::exception &error)
{
    const auto *torchError = dynamic_cast<const c10::Error *>(&error);
    const std::string text = torchError ? torchError->what_without_backtrace() : error.what();
    return text.substr(0, text.find('\n'));
}

std::unique_ptr<ReplayModel> buildModel(const ModelSpec &spec, const torch::Device &device)
{
    switch (spec.kind) {
    case ModelKind::Gpt:
        return std::make_unique<GptModel>(spec, device);
    case ModelKind::Mlp:
        return std::make_unique<MlpModel>(spec, device);
    case ModelKind::Cnn:
        return std::make_unique<CnnModel>(spec, device);
    case ModelKind::TorchScript:
        return std::make_unique<TorchScriptModel>(spec, device);
    }
    throw Error("unknown model kind");
}

} // namespace peaklens::replay
