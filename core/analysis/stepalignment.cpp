// SPDX-License-Identifier: Apache-2.0
#include "stepalignment.h"

#include "phasespans.h"

#include <algorithm>

namespace peaklens {

namespace {

const Step *findStep(const Trace &trace, std::optional<std::int64_t> number)
{
    if (trace.steps.empty())
        return nullptr;
    if (!number)
        return &trace.steps.front();
    const auto found =
        std::find_if(trace.steps.begin(), trace.steps.end(), [&](const Step &step) { return step.number == *number; });
    return found == trace.steps.end() ? nullptr : &*found;
}

struct Boundaries
{
    std::vector<std::int64_t> times; // step begin, each phase's begin and end, step end
    std::vector<Phase> phases;       // the phases in order, consecutive repeats merged
};

Boundaries boundariesOf(const Trace &trace, const Step &step)
{
    Boundaries out;
    out.times.push_back(step.beginNs);
    for (const PhaseSpan &span : phaseSpans(trace)) {
        if (span.beginNs < step.beginNs || span.beginNs >= step.endNs || span.endNs <= out.times.back())
            continue;
        if (!out.phases.empty() && out.phases.back() == span.phase) {
            out.times.back() = std::min(span.endNs, step.endNs); // the same phase goes on
            continue;
        }
        if (span.beginNs > out.times.back())
            out.times.push_back(span.beginNs);
        out.times.push_back(std::min(span.endNs, step.endNs));
        out.phases.push_back(span.phase);
    }
    if (out.times.back() < step.endNs)
        out.times.push_back(step.endNs);
    return out;
}

} // namespace

std::int64_t StepAlignment::map(std::int64_t ns) const
{
    // Before the first or after the last boundary: shifted with the nearest one.
    if (ns <= fromNs.front())
        return toNs.front() + (ns - fromNs.front());
    if (ns >= fromNs.back())
        return toNs.back() + (ns - fromNs.back());
    const auto next = std::upper_bound(fromNs.begin(), fromNs.end(), ns);
    const std::size_t i = static_cast<std::size_t>(next - fromNs.begin()) - 1;
    const double fraction = double(ns - fromNs[i]) / double(fromNs[i + 1] - fromNs[i]);
    return toNs[i] + static_cast<std::int64_t>(fraction * double(toNs[i + 1] - toNs[i]));
}

std::optional<StepAlignment> alignSteps(const Trace &run, const Trace &baseline, std::optional<std::int64_t> stepNumber)
{
    const Step *from = findStep(run, stepNumber);
    const Step *to = findStep(baseline, stepNumber);
    if (!from || !to || from->endNs <= from->beginNs || to->endNs <= to->beginNs)
        return std::nullopt;
    const Boundaries a = boundariesOf(run, *from), b = boundariesOf(baseline, *to);
    StepAlignment alignment;
    if (a.phases == b.phases && a.times.size() == b.times.size()) {
        alignment.fromNs = a.times;
        alignment.toNs = b.times;
    } else {
        alignment.fromNs = {from->beginNs, from->endNs};
        alignment.toNs = {to->beginNs, to->endNs};
    }
    return alignment;
}

std::vector<SeriesPoint> alignedSeries(std::span<const SeriesPoint> series, const StepAlignment &alignment)
{
    const std::int64_t begin = alignment.fromNs.front(), end = alignment.fromNs.back();
    std::vector<SeriesPoint> out;
    const auto first = std::lower_bound(series.begin(), series.end(), begin,
                                        [](const SeriesPoint &point, std::int64_t t) { return point.timeNs < t; });
    std::int64_t value = first == series.begin() ? 0 : std::prev(first)->bytes;
    out.push_back({alignment.toNs.front(), value});
    for (auto point = first; point != series.end() && point->timeNs < end; ++point) {
        value = point->bytes;
        out.push_back({alignment.map(point->timeNs), value});
    }
    out.push_back({alignment.toNs.back(), value});
    return out;
}

} // namespace peaklens
