// SPDX-License-Identifier: Apache-2.0
// The planner with the command line's defaults against Rotor's optimum, on replayed steps:
//   bench_rotor MODEL [--layers N] [--d-model D] [--batch B] [--dtype bf16] [--micro-batches M] [--budgets K]
// MODEL is gpt, mlp, cnn or a model spec (SPEC.json, TorchScript blocks). Replays the
// step, then at K budgets from the lowest reachable peak to the measured one plans with
// PlannerOptions{} (what `peaklens-cli plan --budget` uses) and takes Rotor's optimum on
// the same measured chain (tests/plugins/torch/rotorreference.h). Both schedules are
// replayed with the memory limited to the budget. Prints a line per budget: the planner's
// predicted and measured peak and added time, Rotor's, and whether Rotor's fitted in the
// replay; last, how many budgets where Rotor's fitted the planner added more time.

#include "../plugins/torch/rotorreference.h"

#include "core/plan/planner.h"
#include "plugins/torch/replayrunner.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <string>

using namespace peaklens;
using namespace peaklens::replay;

namespace {

int microBatches = 1;

RunResult replayStep(const ModelSpec &spec, const std::string &checkpoint, bool bf16, std::optional<std::int64_t> limit,
                     int steps)
{
    RunOptions options;
    options.microBatches = microBatches;
    options.checkpoint = checkpoint;
    options.steps = steps;
    options.warmupSteps = 1;
    options.device = DeviceChoice::Cpu;
    options.bf16 = bf16;
    options.memoryLimitBytes = limit;
    options.calibrationSteps = limit ? 0 : 3;
    return runReplay(spec, options);
}

double mib(std::int64_t bytes)
{
    return static_cast<double>(bytes) / double(1 << 20);
}

double ms(std::int64_t ns)
{
    return static_cast<double>(ns) / 1e6;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_rotor MODEL [--layers N] [--d-model D] [--batch B] [--dtype bf16] [--micro-batches M] "
                             "[--budgets K]\n");
        return 2;
    }
    const std::string model = argv[1];
    nlohmann::json object = {{"model", model}};
    bool bf16 = false;
    int budgets = 8;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--dtype")
            bf16 = value == "bf16";
        else if (flag == "--micro-batches")
            microBatches = std::max(1, std::stoi(value));
        else if (flag == "--budgets")
            budgets = std::max(2, std::stoi(value));
        else if (flag.starts_with("--"))
            object[flag.substr(2) == "d-model" ? "d_model" : flag.substr(2)] = std::stoll(value);
    }
    const ModelSpec spec = model.ends_with(".json") ? readModelSpec(model) : parseModelSpec(object, "bench", ".");
    const RunResult baseline = replayStep(spec, "none", bf16, std::nullopt, 5);
    const CostModel costs = buildCostModel(*baseline.trace);
    const std::int64_t measured = predict(costs, CheckpointSchedule{}).peakBytes;
    std::int64_t activations = 0;
    std::vector<test::RotorStage> stages;
    for (const ChainLayer &layer : costs.layers) {
        activations += layer.keptBytes;
        stages.push_back({layer.recomputeNs, layer.backwardNs, layer.outputBytes, layer.keptBytes,
                          std::max<std::int64_t>(0, layer.forwardRiseBytes - layer.retainedBytes),
                          std::max<std::int64_t>(0, layer.backwardLevelPeakBytes - layer.levelAtBackwardBytes)});
    }
    const std::int64_t rest = measured - activations; // what Rotor does not count
    const std::int64_t lowest = lowestPeakPlan(costs).prediction.peakBytes;
    std::printf("%s: %zu chain layers, measured peak %.3f MiB, lowest reachable %.3f MiB, step %.1f ms ± %.1f\n", model.c_str(),
                costs.layers.size(), mib(measured), mib(lowest), ms(costs.stepTimeNs), ms(costs.stepTimeSpreadNs));
    std::printf("%-10s | %-48s | %-48s | %s\n", "budget MiB", "planner: predicted/measured MiB, +ms",
                "Rotor: predicted/measured MiB, +ms", "planner - Rotor ms");
    int compared = 0, costlier = 0, plannerOom = 0;
    for (int i = 0; i < budgets; ++i) {
        const std::int64_t budget = lowest + (measured - lowest) * i / (budgets - 1);
        const Plan plan = planForBudget(costs, budget);
        const std::string written = plan.schedule.empty() ? "none" : strategyOf(costs, plan).toString();
        const RunResult planRun = replayStep(spec, written, bf16, budget, 1);
        plannerOom += planRun.oom.has_value();
        char plannerText[128], rotorText[128] = "nothing fits", difference[64] = "-";
        std::snprintf(plannerText, sizeof plannerText, "%.3f/%s, +%.1f%s", mib(plan.prediction.peakBytes),
                      planRun.oom ? "OOM" : std::to_string(mib(*planRun.peakAllocatedBytes)).substr(0, 7).c_str(),
                      ms(plan.prediction.addedTimeNs), plan.feasible ? "" : " (infeasible)");
        if (const auto rotor = test::rotorOptimum(stages, budget - rest)) {
            const Prediction predicted = predict(costs, rotor->schedule);
            const std::string rotorWritten =
                rotor->schedule.empty() ? "none" : CheckpointStrategy::of(rotor->schedule, chainPaths(costs)).toString();
            const RunResult rotorRun = replayStep(spec, rotorWritten, bf16, budget, 1);
            std::snprintf(rotorText, sizeof rotorText, "%.3f/%s, +%.1f", mib(predicted.peakBytes),
                          rotorRun.oom ? "OOM" : std::to_string(mib(*rotorRun.peakAllocatedBytes)).substr(0, 7).c_str(),
                          ms(predicted.addedTimeNs));
            if (!rotorRun.oom) {
                ++compared;
                const std::int64_t more = plan.prediction.addedTimeNs - predicted.addedTimeNs;
                costlier += more > 0;
                std::snprintf(difference, sizeof difference, "%+.2f", ms(more));
            }
        }
        std::printf("%-10.3f | %-48s | %-48s | %s\n", mib(budget), plannerText, rotorText, difference);
    }
    std::printf("budgets where Rotor's schedule fitted in replay: %d; the planner added more time at %d; "
                "the planner's schedule ran out of memory at %d\n",
                compared, costlier, plannerOom);
    return 0;
}
