// SPDX-License-Identifier: Apache-2.0
#pragma once
// What peaklens-replay builds and trains: a built-in model (GPT decoder stack, MLP stack,
// ResNet-style CNN) or a chain of TorchScript blocks, with its batch. Read from the JSON
// spec documented in docs/replay.md; no LibTorch here, so it is checked before any runs.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace peaklens::replay {

enum class ModelKind { Gpt, Mlp, Cnn, TorchScript };

struct ScriptBlock
{
    std::string name; // layer path, "blocks.0"
    std::string file; // absolute, or relative to the spec file
};

struct ModelSpec
{
    ModelKind kind = ModelKind::Gpt;
    std::int64_t layers = 4;
    std::int64_t dModel = 128; // GPT and MLP width
    std::int64_t heads = 4;
    std::int64_t seq = 64;
    std::int64_t vocab = 1024;
    std::int64_t channels = 32; // CNN
    std::int64_t image = 32;    // CNN: image height and width
    std::int64_t classes = 10;  // MLP, CNN, TorchScript cross-entropy
    std::int64_t batch = 4;
    double dropout = 0.1;
    double learningRate = 1e-3;
    std::uint64_t seed = 0;

    // TorchScript only.
    std::vector<ScriptBlock> blocks;
    std::vector<std::int64_t> inputShape; // batch first
    bool integerInput = false;            // token ids in [0, classes) instead of normal floats
    std::string loss = "mse";             // "mse" against a fixed random target, or "cross_entropy"

    nlohmann::json toJson() const;
};

std::string modelKindName(ModelKind kind);

// A built-in model's spec with its defaults. Throws Error for unknown names.
ModelSpec builtinSpec(const std::string &name);

// Parses and checks a spec; `source` names it in error sentences and relative block files
// resolve against `baseDirectory`. Throws Error with a sentence for anything wrong.
ModelSpec parseModelSpec(const nlohmann::json &json, const std::string &source, const std::string &baseDirectory);
ModelSpec readModelSpec(const std::string &path);

} // namespace peaklens::replay
