#include "steptimecomparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace peaklens {

namespace {

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

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

double predictedStepHereMs(double predictedMs, double modelMs, const std::vector<double> &baselineHereMs)
{
    if (baselineHereMs.empty() || modelMs <= 0)
        return predictedMs;
    return spreadOf(baselineHereMs).medianMs * predictedMs / modelMs;
}

std::string changeText(const StepTimeComparison &change)
{
    const auto percent = [](double value) {
        char text[32];
        // A real minus sign, so columns of signed figures line up.
        std::snprintf(text, sizeof text, "%s%.1f", value < 0 ? "\u2212" : "+", std::fabs(value));
        return std::string(text);
    };
    const std::string range = percent(change.lowPercent) + "\u2026" + percent(change.highPercent) + " %";
    return change.withinNoise() ? "within noise (" + range + ")" : percent(change.changePercent) + " % (" + range + ")";
}

} // namespace peaklens
