// SPDX-License-Identifier: Apache-2.0
#include "steptimecomparison.h"

#include "core/analysis/median.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace peaklens {

namespace {

double percentChange(double from, double to)
{
    return (to / from - 1) * 100;
}

} // namespace

TimingSpread spreadOf(const std::vector<double> &timesMs)
{
    if (timesMs.empty())
        return {};
    const auto [low, high] = std::minmax_element(timesMs.begin(), timesMs.end());
    return {median(timesMs), *low, *high, timesMs.size()};
}

std::optional<StepTimeComparison> compareStepTimes(const std::vector<double> &baselineMs, const std::vector<double> &runMs)
{
    if (baselineMs.empty() || runMs.empty())
        return std::nullopt;
    StepTimeComparison comparison;
    comparison.baseline = spreadOf(baselineMs);
    comparison.run = spreadOf(runMs);
    if (baselineMs.size() == runMs.size()) {
        // Each run step against the baseline step measured beside it: what both shared
        // (a busy neighbour, a clock that moved) divides out of each change.
        std::vector<double> changes;
        for (std::size_t i = 0; i < runMs.size(); ++i) {
            if (baselineMs[i] > 0)
                changes.push_back(percentChange(baselineMs[i], runMs[i]));
        }
        if (changes.empty())
            return std::nullopt;
        const auto [low, high] = std::minmax_element(changes.begin(), changes.end());
        comparison.paired = true;
        comparison.changePercent = median(changes);
        comparison.lowPercent = *low;
        comparison.highPercent = *high;
        return comparison;
    }
    if (comparison.baseline.medianMs <= 0)
        return std::nullopt;
    comparison.changePercent = percentChange(comparison.baseline.medianMs, comparison.run.medianMs);
    comparison.lowPercent = percentChange(comparison.baseline.medianMs, comparison.run.minMs);
    comparison.highPercent = percentChange(comparison.baseline.medianMs, comparison.run.maxMs);
    return comparison;
}

std::string signedPercentText(double percent)
{
    char text[32];
    // A real minus sign, so columns of signed figures line up.
    std::snprintf(text, sizeof text, "%s%.1f %%", percent < 0 ? "\u2212" : "+", std::fabs(percent));
    return text;
}

std::string changeText(const StepTimeComparison &change)
{
    const auto bare = [](double value) {
        std::string text = signedPercentText(value);
        return text.substr(0, text.size() - 2); // without " %"
    };
    const std::string range = bare(change.lowPercent) + "\u2026" + bare(change.highPercent) + " %";
    if (change.noisy())
        return "too noisy to tell (" + range + ")";
    return change.withinNoise() ? "within noise (" + range + ")" : signedPercentText(change.changePercent) + " (" + range + ")";
}

StepChange stepChange(std::int64_t predictedStepNs, std::int64_t modelStepNs, const std::vector<double> &baselineHereMs,
                      const std::vector<double> &runMs)
{
    StepChange change;
    if (modelStepNs > 0)
        change.predictedPercent = percentChange(static_cast<double>(modelStepNs), static_cast<double>(predictedStepNs));
    if (!baselineHereMs.empty())
        change.baselineHere = spreadOf(baselineHereMs);
    if (!runMs.empty())
        change.run = spreadOf(runMs);
    change.measured = compareStepTimes(baselineHereMs, runMs);
    return change;
}

} // namespace peaklens
