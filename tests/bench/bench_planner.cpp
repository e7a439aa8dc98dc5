// SPDX-License-Identifier: Apache-2.0
// Benchmark of the checkpoint planner and predictor on a random chain of N layers:
//   bench_planner [N=500] [STATES=4096] [BRUTE_N=20]
// prints the median time of planForBudget (whole layers, then with per-op policies
// weighed too, each layer profiled as ten operators), the mean time of one predict() call, the
// time of an impossible-budget, an overhead and a pareto search, the time to build the
// cost model from a recorded step of N layers, and the time brute force
// takes over all 2^BRUTE_N subsets of a smaller chain.

#include "core/plan/planner.h"
#include "core/plan/schedulesearch.h"
#include "core/trace/tracebuilder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace peaklens;

namespace {

CostModel randomChain(std::mt19937_64 &random, std::size_t n)
{
    std::uniform_int_distribution<std::int64_t> bytes(1 << 20, 256 << 20);
    std::uniform_int_distribution<std::int64_t> time(10'000, 2'000'000);
    CostModel model;
    model.stepTimeNs = 1'000'000'000;
    for (std::size_t i = 0; i <= n; ++i) {
        model.curve.push_back({static_cast<std::int64_t>(i), 0, static_cast<std::uint32_t>(i), false, Phase::Forward});
        model.forwardPeakBytes.push_back((8ll << 30) + static_cast<std::int64_t>(i) * (200 << 20) + bytes(random));
        model.forwardPeakPoint.push_back(i);
        model.offloadedForwardPeakBytes.push_back(model.forwardPeakBytes.back() - bytes(random) / 4);
        model.offloadedForwardPeakPoint.push_back(i);
        model.gapPeakBytes.push_back(INT64_MIN);
        model.gapPeakPoint.push_back(0);
    }
    for (std::size_t i = 0; i < n; ++i) {
        ChainLayer layer;
        layer.savingBytes = bytes(random);
        layer.recomputePeakBytes = (8ll << 30) + static_cast<std::int64_t>(i) * (200 << 20) + bytes(random);
        layer.backwardPeakBytes = (8ll << 30) + static_cast<std::int64_t>(i) * (200 << 20) + bytes(random) / 2;
        layer.offloadedBackwardPeakBytes = layer.backwardPeakBytes - bytes(random) / 4;
        layer.recomputeNs = time(random);
        // Ten operators whose outputs hold up to 1.5 times the saving, in up to 1.5 times the
        // forward (so that some leading runs pay and some do not), one allocating call in all.
        layer.operators.spanNs = layer.recomputeNs;
        layer.operators.calls = 1;
        for (int o = 0; o < 10; ++o) {
            OperatorOutputs op;
            op.op = "aten.op" + std::to_string(o) + ".default";
            op.bytes = layer.savingBytes / 10 * (random() % 3) / 2;
            op.ns = layer.recomputeNs / 10 * (random() % 3) / 2;
            op.calls = 1;
            layer.operators.outputs.push_back(op);
        }
        model.layers.push_back(layer);
    }
    return model;
}

// A recorded step of n chain layers as the replay engine writes one: per layer a forward
// saving four blocks and passing an output on, a backward freeing them; a loss, an
// optimizer step. About 12 events per layer.
TracePtr chainTrace(std::size_t n)
{
    TraceBuilder builder;
    const std::uint32_t lane = builder.lane({{DeviceType::Cuda, 0}, 0});
    std::int64_t t = 0;
    std::uint64_t address = 1;
    const auto event = [&](std::int64_t bytes, std::uint64_t addr, std::uint32_t layer, Phase phase, Category category) {
        builder.addEvent({t += 10, bytes, addr, lane, layer, 0, category, phase});
    };
    event(1 << 30, address++, kNoLayer, Phase::Other, Category::Parameter);
    std::vector<std::uint32_t> layers;
    std::vector<std::vector<std::uint64_t>> saved(n);
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t layer = builder.layer("blocks." + std::to_string(k));
        layers.push_back(layer);
        const std::int64_t begin = t;
        for (int b = 0; b < 4; ++b) {
            saved[k].push_back(address);
            event(1 << 20, address++, layer, Phase::Forward, Category::Activation);
        }
        event(4 << 20, address, layer, Phase::Forward, Category::Temporary);
        event(-(4 << 20), address++, layer, Phase::Forward, Category::Temporary);
        saved[k].push_back(address);
        event(1 << 20, address++, layer, Phase::Forward, Category::Activation); // its output
        builder.addRange({layer, Phase::Forward, 0, begin, t + 1, 0});
        t += 1;
    }
    for (std::size_t k = n; k-- > 0;) {
        const std::int64_t begin = t;
        event(1 << 20, address, layers[k], Phase::Backward, Category::Temporary);
        event(-(1 << 20), address++, layers[k], Phase::Backward, Category::Temporary);
        for (std::uint64_t addr : saved[k])
            event(-(1 << 20), addr, layers[k], Phase::Backward, Category::Activation);
        builder.addRange({layers[k], Phase::Backward, 0, begin, t + 1, 0});
        t += 1;
    }
    builder.addStep({0, 0, t + 10});
    return builder.finish();
}

double since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv)
{
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 500;
    PlannerOptions options;
    options.maxStates = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 4096;
    const std::size_t bruteN = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 20;

    std::mt19937_64 random(1);
    const CostModel model = randomChain(random, n);
    const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes;
    const std::int64_t lowest = lowestPeakPlan(model, options).prediction.peakBytes;
    const std::int64_t budget = lowest + (measured - lowest) / 3;

    std::vector<double> times;
    Plan plan;
    for (int run = 0; run < 21; ++run) {
        const auto start = std::chrono::steady_clock::now();
        plan = planForBudget(model, budget, options);
        times.push_back(since(start));
    }
    std::sort(times.begin(), times.end());
    std::size_t count = 0;
    for (bool on : plan.checkpoint)
        count += on;

    // The same budget with per-op policies, then offload, weighed as well: the median of 21,
    // with how many layers took one and the added time against the whole-layer plan's.
    const auto weighed = [&](const char *name, PlannerOptions more, auto took) {
        std::vector<double> weighedTimes;
        Plan weighedPlan;
        for (int run = 0; run < 21; ++run) {
            const auto start = std::chrono::steady_clock::now();
            weighedPlan = planForBudget(model, budget, more);
            weighedTimes.push_back(since(start));
        }
        std::sort(weighedTimes.begin(), weighedTimes.end());
        const auto layers = std::count_if(weighedPlan.schedule.begin(), weighedPlan.schedule.end(), took);
        std::printf("{\"n\": %zu, \"%s_plan_ms_median\": %.3f, \"%s_plan_ms_min\": %.3f, \"%s_plan_ms_max\": %.3f, "
                    "\"%s_layers\": %td, \"%s_added_ms\": %.3f, \"whole_layers_added_ms\": %.3f}\n",
                    n, name, weighedTimes[weighedTimes.size() / 2], name, weighedTimes.front(), name, weighedTimes.back(), name,
                    layers, name, static_cast<double>(weighedPlan.prediction.addedTimeNs) / 1e6,
                    static_cast<double>(plan.prediction.addedTimeNs) / 1e6);
    };
    PlannerOptions perOpOptions = options;
    perOpOptions.perOpPolicies = true;
    weighed("per_op", perOpOptions, [](const CheckpointUnit &unit) { return !unit.saved.empty(); });
    PlannerOptions offloadOptions = options;
    offloadOptions.offload = true;
    weighed("offload", offloadOptions, [](const CheckpointUnit &unit) { return unit.kept == KeptForm::Host; });

    std::vector<std::vector<bool>> toggles(1000, std::vector<bool>(n));
    for (auto &set : toggles)
        for (std::size_t i = 0; i < n; ++i)
            set[i] = random() & 1;
    std::int64_t sink = 0;
    const auto predictStart = std::chrono::steady_clock::now();
    for (int round = 0; round < 10; ++round)
        for (const auto &set : toggles)
            sink += predict(model, set).peakBytes;
    const double predictMs = since(predictStart) / 10000.0;

    const CostModel small = randomChain(random, bruteN);
    const auto bruteStart = std::chrono::steady_clock::now();
    std::vector<bool> set(bruteN);
    std::int64_t best = INT64_MAX;
    const std::int64_t smallBudget = predict(small, CheckpointSchedule{}).peakBytes - (300 << 20);
    const std::int64_t smallTarget = smallBudget - budgetMargin(small, smallBudget); // what the planner aims at
    for (std::uint64_t mask = 0; mask < (std::uint64_t(1) << bruteN); ++mask) {
        for (std::size_t i = 0; i < bruteN; ++i)
            set[i] = mask >> i & 1u;
        const Prediction p = predict(small, set);
        if (p.peakBytes <= smallTarget)
            best = std::min(best, p.addedTimeNs);
    }
    const double bruteMs = since(bruteStart);
    const auto smallStart = std::chrono::steady_clock::now();
    const Plan smallPlan = planForBudget(small, smallBudget, options);
    const double smallMs = since(smallStart);

    // Building the cost model from a recorded step of N layers.
    // One timing is noise: the median of seven builds, with the fastest and the slowest.
    const TracePtr trace = chainTrace(n);
    std::vector<double> buildMs;
    std::size_t builtLayers = 0;
    for (int round = 0; round < 7; ++round) {
        const auto buildStart = std::chrono::steady_clock::now();
        builtLayers = buildCostModel(*trace).layers.size();
        buildMs.push_back(since(buildStart));
    }
    std::sort(buildMs.begin(), buildMs.end());
    std::printf("{\"cost_model_ms\": %.1f, \"cost_model_ms_min\": %.1f, \"cost_model_ms_max\": %.1f, \"events\": %zu, "
                "\"layers\": %zu}\n",
                buildMs[buildMs.size() / 2], buildMs.front(), buildMs.back(), trace->events.size(), builtLayers);

    // The searches built on the programme: an impossible budget (the lowest reachable peak),
    // an overhead, and the pareto sweep.
    auto timed = [](auto &&call) {
        const auto start = std::chrono::steady_clock::now();
        call();
        return since(start);
    };
    const double impossibleMs = timed([&] { planForBudget(model, lowest / 2, options); });
    const double overheadMs = timed([&] { planForOverhead(model, 0.05, options); });
    const double paretoMs = timed([&] { paretoSweep(model, 24, options); });
    std::printf("{\"impossible_budget_ms\": %.1f, \"overhead_ms\": %.1f, \"pareto_ms\": %.1f}\n", impossibleMs, overheadMs,
                paretoMs);

    // Segments and multi-level schedules are searched on chains of up to
    // ScheduleSearch::kMostLayers layers: a measured step of that many.
    const CostModel deep = buildCostModel(*chainTrace(ScheduleSearch::kMostLayers));
    const std::int64_t deepMeasured = predict(deep, CheckpointSchedule{}).peakBytes;
    const std::int64_t deepLowest = lowestPeakPlan(deep).prediction.peakBytes;
    const double scheduleMs = timed([&] { planForBudget(deep, deepLowest + (deepMeasured - deepLowest) / 3); });
    const double scheduleParetoMs = timed([&] { paretoSweep(deep, 24); });
    std::printf("{\"schedule_search_layers\": %zu, \"schedule_budget_ms\": %.1f, \"schedule_pareto_ms\": %.1f}\n",
                deep.layers.size(), scheduleMs, scheduleParetoMs);

    std::printf("{\"n\": %zu, \"states\": %zu, \"plan_ms_median\": %.3f, \"plan_ms_max\": %.3f, \"checkpointed\": %zu, "
                "\"predict_ms\": %.5f, \"brute_force_n\": %zu, \"brute_force_ms\": %.1f, \"planner_ms_same_chain\": %.3f, "
                "\"no_worse_than_every_subset\": %s, \"sink\": %lld}\n",
                n, options.maxStates, times[times.size() / 2], times.back(), count, predictMs, bruteN, bruteMs, smallMs,
                smallPlan.prediction.addedTimeNs <= best ? "true" : "false", static_cast<long long>(sink % 7));
    return 0;
}
