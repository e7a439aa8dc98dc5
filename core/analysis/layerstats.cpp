#include "layerstats.h"

#include "lanedevices.h"
#include "liveblocks.h"

#include <algorithm>
#include <map>

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
    // The (layer, step) pairs with a forward or a backward range: times are per step.
    std::vector<std::pair<std::uint32_t, std::int64_t>> forwardSteps, backwardSteps;
    for (const Range &range : trace.ranges) {
        if (range.layer == kNoLayer)
            continue;
        LayerStats &s = stats[range.layer];
        if (range.phase == Phase::Forward) {
            s.forwardNs += range.durationNs();
            ++s.forwardCalls;
            forwardSteps.emplace_back(range.layer, range.step);
        } else if (range.phase == Phase::Backward) {
            s.backwardNs += range.durationNs();
            ++s.backwardCalls;
            backwardSteps.emplace_back(range.layer, range.step);
        }
    }
    const auto perStep = [&stats](std::vector<std::pair<std::uint32_t, std::int64_t>> &pairs, std::int64_t LayerStats::*ns) {
        std::sort(pairs.begin(), pairs.end());
        pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
        for (std::size_t i = 0; i < pairs.size();) {
            std::size_t end = i;
            while (end < pairs.size() && pairs[end].first == pairs[i].first)
                ++end;
            stats[pairs[i].first].*ns /= static_cast<std::int64_t>(end - i);
            i = end;
        }
    };
    perStep(forwardSteps, &LayerStats::forwardNs);
    perStep(backwardSteps, &LayerStats::backwardNs);
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
