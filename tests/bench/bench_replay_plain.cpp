// SPDX-License-Identifier: Apache-2.0
// The peer of peaklens-replay's harness: a plain LibTorch training loop over the same
// model (same modules, batch, optimizer and seed) and the same malloc settings, with
// LibTorch's own CPU allocator and no layer attribution, hooks or checkpointing. Prints
// the median step time as JSON.
//
//   bench_replay_plain 'SPEC_JSON' [STEPS] [WARMUP]

#include "plugins/torch/memoryrecorder.h"
#include "plugins/torch/replaymodel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>

using namespace peaklens::replay;

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::cerr << "usage: bench_replay_plain SPEC_JSON [STEPS] [WARMUP]\n";
        return 2;
    }
    const ModelSpec spec = parseModelSpec(nlohmann::json::parse(argv[1]), "spec", ".");
    const int steps = argc > 2 ? std::atoi(argv[2]) : 7;
    const int warmup = argc > 3 ? std::atoi(argv[3]) : 2;

    retainFreedCpuMemory();
    torch::manual_seed(spec.seed);
    const auto model = buildModel(spec, torch::kCPU);
    const Batch batch = model->makeBatch(torch::kCPU);
    torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(spec.learningRate));
    std::vector<double> times;
    for (int step = 0; step < warmup + steps; ++step) {
        const auto begin = std::chrono::steady_clock::now();
        for (torch::Tensor &parameter : model->parameters())
            parameter.mutable_grad() = torch::Tensor();
        torch::Tensor x = batch.input;
        for (const Stage &stage : model->stages())
            x = stage.forward(x);
        model->loss(x, batch.target).backward();
        optimizer.step();
        const auto end = std::chrono::steady_clock::now();
        if (step >= warmup)
            times.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
    }
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    const double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    std::cout << nlohmann::json{{"step_time_ms", median}, {"steps", n}}.dump() << "\n";
}
