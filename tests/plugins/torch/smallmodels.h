// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small built-in models, replayed on the CPU in a second, for the tests that plan a
// budget and replay the plan under it.

#include "plugins/torch/replayrunner.h"

#include <QString>

#include <nlohmann/json.hpp>

namespace peaklens::test {

// gpt, mlp or cnn with `layers` chain layers.
inline replay::ModelSpec smallModel(const QString &model, int layers)
{
    nlohmann::json object;
    if (model == QStringLiteral("gpt"))
        object = {{"model", "gpt"}, {"layers", layers}, {"d_model", 32}, {"heads", 2}, {"seq", 64}, {"batch", 8}, {"vocab", 64}};
    else if (model == QStringLiteral("mlp"))
        object = {{"model", "mlp"}, {"layers", layers}, {"d_model", 64}, {"batch", 512}, {"classes", 5}};
    else
        object = {{"model", "cnn"}, {"layers", layers}, {"channels", 8}, {"image", 16}, {"batch", 8}, {"classes", 5}};
    return replay::parseModelSpec(object, "test", ".");
}

// Two measured steps after one warm-up, optionally with the memory limited.
inline replay::RunResult replaySteps(const replay::ModelSpec &spec, const std::string &checkpoint, int microBatches = 1,
                                     bool bf16 = false, std::optional<std::int64_t> limit = std::nullopt)
{
    replay::RunOptions options;
    options.checkpoint = checkpoint;
    options.steps = 2;
    options.warmupSteps = 1;
    options.device = replay::DeviceChoice::Cpu;
    options.microBatches = microBatches;
    options.bf16 = bf16;
    options.memoryLimitBytes = limit;
    return replay::runReplay(spec, options);
}

} // namespace peaklens::test
