// SPDX-License-Identifier: Apache-2.0
#include "modeltimes.h"

#include "chainselection.h"

#include "core/analysis/median.h"
#include "core/trace/metadata.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace peaklens {

namespace {

std::int64_t totalNs(const std::vector<Interval> &intervals)
{
    std::int64_t ns = 0;
    for (const auto &[begin, end] : intervals)
        ns += end - begin;
    return ns;
}

// A single step's times are noisy; with several steps the model takes, per chain layer,
// the median over the steps of its forward and backward time in a step (all passes), and
// the median step time.
void useMedianTimes(const Trace &trace, CostModel &model)
{
    if (trace.steps.size() < 2)
        return;
    std::vector<std::int64_t> stepTimes;
    for (const Step &step : trace.steps)
        stepTimes.push_back(step.durationNs());
    useMedianStepTime(model, stepTimes);
    std::vector<std::uint32_t> layers;
    for (const ChainLayer &layer : model.layers)
        layers.push_back(layer.layer);
    std::vector<std::vector<std::int64_t>> forward(layers.size()), backward(layers.size());
    for (const Step &step : trace.steps) {
        const auto ranges = rangesIn(trace, layers, step.beginNs, step.endNs, step.number);
        for (std::size_t k = 0; k < layers.size(); ++k) {
            const LayerRanges &r = ranges.at(layers[k]);
            // Traces imported without the helper range no backward: their forwards still count.
            if (r.forward.size() == model.passes)
                forward[k].push_back(totalNs(r.forward));
            if (r.backward.size() == model.passes)
                backward[k].push_back(totalNs(r.backward));
        }
    }
    std::vector<std::int64_t> deviations;
    for (std::size_t k = 0; k < layers.size(); ++k) {
        if (forward[k].size() >= 2) {
            model.layers[k].forwardNs = median(forward[k]);
            deviations.push_back(medianDeviation(forward[k], model.layers[k].forwardNs));
            model.layers[k].recomputeSpreadNs = deviations.back();
        }
        if (backward[k].size() >= 2)
            model.layers[k].backwardNs = median(backward[k]);
    }
    if (!deviations.empty())
        model.recomputeSpreadNs = median(deviations);
}

// A layer far slower than the chain's others (at least 3 layers) in the one step the model
// reads: the first call of a fresh process (CUDA context, cuDNN's algorithm search, lazy
// initialisation), not what a recompute will cost. Its time is flagged and the chain's
// median taken instead; the spread of the others stays the recompute's spread.
constexpr std::int64_t kOutlierFactor = 3;

void flagTimeOutliers(CostModel &model)
{
    if (model.layers.size() < 3)
        return;
    const auto flag = [&](std::int64_t ChainLayer::*time, std::optional<std::int64_t> ChainLayer::*outlier) {
        std::vector<std::int64_t> times;
        for (const ChainLayer &layer : model.layers)
            times.push_back(layer.*time);
        const std::int64_t typical = median(times);
        const std::int64_t spread = medianDeviation(times, typical);
        for (ChainLayer &layer : model.layers) {
            const std::int64_t measured = layer.*time;
            if (typical > 0 && measured > kOutlierFactor * typical && measured - typical > kOutlierFactor * spread) {
                layer.*outlier = measured;
                layer.*time = typical;
            }
        }
        return spread;
    };
    const std::int64_t forwardSpread = flag(&ChainLayer::forwardNs, &ChainLayer::outlierForwardNs);
    // Backward spans estimated from frees hold what runs between the layers' backwards too:
    // only measured ones are judged.
    if (!model.backwardEstimated)
        flag(&ChainLayer::backwardNs, &ChainLayer::outlierBackwardNs);
    model.recomputeSpreadNs = std::max(model.recomputeSpreadNs, forwardSpread);
}

// What a checkpoint adds to a step is its forward time, unless the trace carries a
// measurement (peaklens-replay's calibration steps): on a CPU a forward without a graph
// and a recompute reuse memory warm in the cache and cost less than the measured forward.
void useMeasuredCheckpointCosts(const Trace &trace, CostModel &model)
{
    for (ChainLayer &layer : model.layers) {
        layer.recomputeNs = layer.forwardNs;
        layer.recomputeSpreadNs = std::max(layer.recomputeSpreadNs, model.recomputeSpreadNs);
        for (ChainPart &part : layer.parts)
            part.recomputeSpreadNs = model.recomputeSpreadNs;
    }
    const auto object = [&](std::string_view key) {
        const std::string text = trace.metaValue(key);
        nlohmann::json value = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        return value.is_object() ? value : nlohmann::json::object();
    };
    const nlohmann::json costs = object(metakey::CheckpointCosts), spreads = object(metakey::CheckpointCostSpreads);
    // At least a nanosecond: a recompute runs its forward again, and a cost the rounds'
    // noise took to nothing would make a checkpoint free, chosen where none is needed.
    const auto read = [](const nlohmann::json &values, const std::string &path, std::int64_t &into, std::int64_t least) {
        if (values.contains(path) && values[path].is_number_integer())
            into = std::max(least, values[path].get<std::int64_t>());
    };
    for (ChainLayer &layer : model.layers) {
        for (ChainPart &part : layer.parts) {
            read(costs, part.path, part.recomputeNs, 1);
            read(spreads, part.path, part.recomputeSpreadNs, 0);
        }
    }
    const bool all = std::all_of(model.layers.begin(), model.layers.end(), [&](const ChainLayer &layer) {
        return costs.contains(layer.path) && costs[layer.path].is_number_integer();
    });
    if (!all)
        return;
    for (ChainLayer &layer : model.layers) {
        read(costs, layer.path, layer.recomputeNs, 1);
        read(spreads, layer.path, layer.recomputeSpreadNs, 0);
    }
    model.recomputeMeasured = true;
}

} // namespace

void useMedianStepTime(CostModel &model, const std::vector<std::int64_t> &stepTimesNs)
{
    if (stepTimesNs.size() < 2)
        return;
    model.stepTimeNs = median(stepTimesNs);
    // The median absolute deviation: a warm-up step ten times as long leaves it alone.
    model.stepTimeSpreadNs = medianDeviation(stepTimesNs, model.stepTimeNs);
}

void useStepTimes(const Trace &trace, CostModel &model)
{
    useMedianTimes(trace, model);
    flagTimeOutliers(model);
    useMeasuredCheckpointCosts(trace, model);
}

} // namespace peaklens
