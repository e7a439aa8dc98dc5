// SPDX-License-Identifier: Apache-2.0
#include "batchscaling.h"

#include "core/error.h"
#include "core/trace/metadata.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace peaklens {

namespace {

// Memory from before the trace is left as it was: what it holds is not known.
bool scalesWithBatch(Category category)
{
    return category != Category::Parameter && category != Category::Gradient && category != Category::OptimizerState
           && category != Category::BeforeTrace;
}

} // namespace

Trace withBatchScaled(const Trace &trace, double factor)
{
    // In a bf16 replay, a block the size of a parameter's half-precision copy (autocast's
    // weight casts, kept for the backward) holds the parameter again, not samples.
    std::unordered_set<std::int64_t> parameterSizes;
    const nlohmann::json options = nlohmann::json::parse(trace.metaValue(metakey::ReplayOptions), nullptr, false);
    if (options.is_object() && options.value("dtype", "") == "bf16") {
        for (std::size_t i = 0; i < trace.events.size(); ++i) {
            if (trace.events.category(i) == Category::Parameter && trace.events.deltaBytes(i) > 0
                && trace.events.deltaBytes(i) % 2 == 0)
                parameterSizes.insert(trace.events.deltaBytes(i) / 2);
        }
    }
    Trace scaled = trace;
    scaled.events.clear();
    scaled.events.reserve(trace.events.size());
    // Per lane, address -> the scaled size of the live block there.
    std::vector<std::unordered_map<std::uint64_t, std::int64_t>> live(trace.lanes.size() + 1);
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        MemoryEvent event = trace.events.at(i);
        auto &lane = live[std::min<std::size_t>(event.lane, trace.lanes.size())];
        if (event.deltaBytes > 0) {
            if (scalesWithBatch(event.category) && !parameterSizes.contains(event.deltaBytes))
                event.deltaBytes = std::max<std::int64_t>(1, std::llround(static_cast<double>(event.deltaBytes) * factor));
            lane[event.addr] = event.deltaBytes;
        } else if (auto found = lane.find(event.addr); found != lane.end()) {
            event.deltaBytes = -found->second;
            lane.erase(found);
        } else if (scalesWithBatch(event.category) && !parameterSizes.contains(event.deltaBytes)) {
            event.deltaBytes = std::llround(static_cast<double>(event.deltaBytes) * factor);
        }
        scaled.events.append(event);
    }
    return scaled;
}

std::optional<std::int64_t> tracedBatch(const Trace &trace)
{
    const nlohmann::json spec = nlohmann::json::parse(trace.metaValue(metakey::ReplaySpec), nullptr, false);
    if (spec.is_object() && spec.contains("batch") && spec["batch"].is_number_integer() && spec["batch"].get<std::int64_t>() > 0)
        return spec["batch"].get<std::int64_t>();
    return std::nullopt;
}

BatchFit largestBatch(const Trace &trace, const ChainSelection &selection, std::int64_t budgetBytes,
                      std::optional<std::int64_t> traced, bool keepMargin)
{
    PlannerOptions options;
    options.keepMargin = keepMargin;
    // Units: samples when the traced batch is known, else hundredths of it.
    const std::int64_t unit = traced ? *traced : 100;
    // The search goes up to 1024 times the traced batch: keep that far from overflow.
    if (unit <= 0 || unit > kMaxTracedBatch)
        throw Error("A traced batch of " + std::to_string(unit) + " is outside what PeakLens scales (1 to "
                    + std::to_string(kMaxTracedBatch) + ").");
    const auto attempt = [&](std::int64_t units) {
        const double factor = static_cast<double>(units) / static_cast<double>(unit);
        BatchFit fit;
        fit.factor = factor;
        if (traced)
            fit.batch = units;
        fit.model = buildCostModel(withBatchScaled(trace, factor), selection);
        fit.plan = planForBudget(fit.model, budgetBytes, options);
        fit.fits = fit.plan.feasible;
        return fit;
    };
    // Double while it fits, then halve the gap; fits(units) only turns false as units grow.
    BatchFit best = attempt(unit);
    std::int64_t low = unit, high = unit;
    if (best.fits) {
        while (high < unit * 1024) {
            high = std::min(high * 2, unit * 1024);
            BatchFit fit = attempt(high);
            if (!fit.fits)
                break;
            best = std::move(fit);
            low = high;
        }
        if (low == high)
            return best;
    } else {
        high = unit;
        low = 0;
    }
    while (high - low > 1) {
        const std::int64_t middle = low + (high - low) / 2;
        BatchFit fit = attempt(middle);
        (fit.fits ? low : high) = middle;
        if (fit.fits)
            best = std::move(fit);
    }
    return best;
}

} // namespace peaklens
