#include "layerstats.h"

#include "lanedevices.h"
#include "liveblocks.h"

#include <algorithm>
#include <map>
#include <set>

namespace peaklens {

namespace {

// When the backward pass of each step begins: the moment its forward activations are counted.
struct BackwardStart
{
    std::int64_t step;
    std::int64_t timeNs;
    std::int64_t stepBeginNs; // allocations before this belong to an earlier step
};

std::vector<BackwardStart> backwardStarts(const Trace &trace)
{
    std::map<std::int64_t, std::int64_t> firstBackward;
    for (const Range &range : trace.ranges) {
        if (range.phase != Phase::Backward)
            continue;
        auto [it, inserted] = firstBackward.try_emplace(range.step, range.beginNs);
        if (!inserted)
            it->second = std::min(it->second, range.beginNs);
    }
    std::map<std::int64_t, std::int64_t> stepBegins;
    for (const Step &step : trace.steps)
        stepBegins.emplace(step.number, step.beginNs);
    std::vector<BackwardStart> starts;
    for (const auto &[step, timeNs] : firstBackward) {
        auto begin = stepBegins.find(step);
        starts.push_back({step, timeNs, begin == stepBegins.end() ? INT64_MIN : begin->second});
    }
    std::sort(starts.begin(), starts.end(), [](const auto &a, const auto &b) { return a.timeNs < b.timeNs; });
    return starts;
}

void addTimes(const Trace &trace, std::vector<LayerStats> &stats)
{
    std::vector<std::set<std::int64_t>> forwardSteps(stats.size()), backwardSteps(stats.size());
    for (const Range &range : trace.ranges) {
        if (range.layer == kNoLayer)
            continue;
        LayerStats &s = stats[range.layer];
        if (range.phase == Phase::Forward) {
            s.forwardNs += range.durationNs();
            ++s.forwardCalls;
            forwardSteps[range.layer].insert(range.step);
        } else if (range.phase == Phase::Backward) {
            s.backwardNs += range.durationNs();
            ++s.backwardCalls;
            backwardSteps[range.layer].insert(range.step);
        }
    }
    for (std::size_t i = 0; i < stats.size(); ++i) {
        if (!forwardSteps[i].empty())
            stats[i].forwardNs /= static_cast<std::int64_t>(forwardSteps[i].size());
        if (!backwardSteps[i].empty())
            stats[i].backwardNs /= static_cast<std::int64_t>(backwardSteps[i].size());
    }
}

} // namespace

std::vector<LayerStats> computeLayerStats(const Trace &trace)
{
    std::vector<LayerStats> stats(trace.layers.size());
    for (std::size_t i = 0; i < stats.size(); ++i)
        stats[i].layer = static_cast<std::uint32_t>(i);
    addTimes(trace, stats);

    const auto starts = backwardStarts(trace);
    if (starts.empty())
        return stats;

    const LaneDevices lanes(trace);
    LiveBlocks live(trace, lanes);
    const MemoryEvents &events = trace.events;
    std::vector<std::int64_t> selfBytes(stats.size());
    std::size_t next = 0;
    for (const BackwardStart &start : starts) {
        for (; next < events.size() && events.timeNs(next) < start.timeNs; ++next)
            live.apply(next);
        std::fill(selfBytes.begin(), selfBytes.end(), 0);
        live.forEach([&](std::size_t i) {
            if (events.phase(i) == Phase::Forward && events.layer(i) != kNoLayer && events.timeNs(i) >= start.stepBeginNs)
                selfBytes[events.layer(i)] += events.deltaBytes(i);
        });
        // Roll up: a parent always comes before its children, so walk children first.
        std::vector<std::int64_t> inclusive = selfBytes;
        for (std::size_t i = stats.size(); i-- > 0;) {
            const std::uint32_t parent = trace.layers[i].parent;
            if (parent != kNoLayer)
                inclusive[parent] += inclusive[i];
        }
        for (std::size_t i = 0; i < stats.size(); ++i) {
            stats[i].selfActivationBytes = std::max(stats[i].selfActivationBytes, selfBytes[i]);
            stats[i].activationBytes = std::max(stats[i].activationBytes, inclusive[i]);
        }
    }
    return stats;
}

} // namespace peaklens
