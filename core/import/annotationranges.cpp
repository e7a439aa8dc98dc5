// SPDX-License-Identifier: Apache-2.0
#include "annotationranges.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

namespace peaklens {

namespace {

std::optional<std::int64_t> stepNumber(std::string_view name)
{
    for (std::string_view prefix : {std::string_view("ProfilerStep#"), std::string_view("step:")}) {
        if (!name.starts_with(prefix))
            continue;
        std::int64_t number = 0;
        const std::string_view digits = name.substr(prefix.size());
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
        if (ec == std::errc() && end == digits.data() + digits.size())
            return number;
    }
    return std::nullopt;
}

} // namespace

AnnotationScope parseAnnotation(std::string_view name)
{
    if (auto number = stepNumber(name))
        return {number, Phase::Other, {}};
    if (name.starts_with("Optimizer.step#") || name.starts_with("Optimizer.zero_grad#"))
        return {std::nullopt, Phase::Optimizer, {}};
    for (Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
        const std::string_view prefix = phasePrefix(phase);
        if (name == prefix)
            return {std::nullopt, phase, {}};
        if (name.size() > prefix.size() + 1 && name.starts_with(prefix) && name[prefix.size()] == ':')
            return {std::nullopt, phase, std::string(name.substr(prefix.size() + 1))};
    }
    return {};
}

std::vector<std::vector<Range>> addAnnotations(TraceBuilder &builder, std::vector<Annotation> annotations)
{
    // At equal times ends come first: one span ending as the next begins.
    std::stable_sort(annotations.begin(), annotations.end(), [](const Annotation &a, const Annotation &b) {
        return a.timeNs < b.timeNs || (a.timeNs == b.timeNs && !a.start && b.start);
    });
    std::map<std::pair<std::int32_t, std::string>, std::vector<std::int64_t>> open;
    std::vector<Step> steps;
    struct Pending
    {
        Annotation start;
        std::int64_t endNs;
    };
    std::vector<Pending> closed;
    for (const Annotation &annotation : annotations) {
        auto &begins = open[{annotation.group, annotation.name}];
        if (annotation.start) {
            begins.push_back(annotation.timeNs);
        } else if (!begins.empty()) {
            Annotation start = annotation;
            start.timeNs = begins.back();
            begins.pop_back();
            closed.push_back({start, annotation.timeNs});
        }
    }
    for (const Pending &p : closed) {
        if (auto number = parseAnnotation(p.start.name).step)
            steps.push_back(Step{*number, p.start.timeNs, p.endNs});
    }
    for (const Step &step : steps)
        builder.addStep(step);
    std::sort(steps.begin(), steps.end(), [](const Step &a, const Step &b) { return a.beginNs < b.beginNs; });

    std::vector<std::vector<Range>> byDevice;
    for (const Pending &p : closed) {
        if (p.start.name.empty() || p.start.group < 0)
            continue;
        const AnnotationScope scope = parseAnnotation(p.start.name);
        if (scope.step)
            continue;
        Range range;
        range.layer = scope.path.empty() ? kNoLayer : builder.layer(scope.path);
        range.phase = scope.phase;
        range.beginNs = p.start.timeNs;
        range.endNs = p.endNs;
        // PeakLens's own scopes ("fwd:PATH", "opt") are layers' and phases'; any other name a stage.
        if (scope.path.empty() && p.start.name != phasePrefix(scope.phase))
            range.stage = builder.stageName(p.start.name);
        auto step = std::upper_bound(steps.begin(), steps.end(), range.beginNs,
                                     [](std::int64_t t, const Step &s) { return t < s.beginNs; });
        if (step != steps.begin() && std::prev(step)->contains(range.beginNs))
            range.step = std::prev(step)->number;
        builder.addRange(range);
        // A stage without a phase says nothing of the memory in it: not a scope to assign.
        if (scope.phase == Phase::Other)
            continue;
        if (byDevice.size() <= static_cast<std::size_t>(p.start.group))
            byDevice.resize(static_cast<std::size_t>(p.start.group) + 1);
        byDevice[static_cast<std::size_t>(p.start.group)].push_back(range);
    }
    for (auto &ranges : byDevice)
        std::stable_sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) {
            return a.beginNs < b.beginNs || (a.beginNs == b.beginNs && a.endNs > b.endNs);
        });
    return byDevice;
}

void assignScopes(std::vector<MemoryEvent> &events, const std::vector<Range> &ranges)
{
    std::vector<const Range *> open; // innermost last
    std::size_t next = 0;
    for (MemoryEvent &event : events) {
        while (next < ranges.size() && ranges[next].beginNs <= event.timeNs)
            open.push_back(&ranges[next++]);
        // Ranges that ended are closed wherever they sit, so unnested spans cannot stick.
        std::erase_if(open, [&](const Range *range) { return range->endNs <= event.timeNs; });
        if (open.empty() || event.layer != kNoLayer || event.phase != Phase::Other)
            continue;
        event.layer = open.back()->layer;
        event.phase = open.back()->phase;
    }
}

} // namespace peaklens
