// SPDX-License-Identifier: Apache-2.0
#include "stagestats.h"

#include "lanedevices.h"

#include <algorithm>

namespace peaklens {

std::vector<StageStats> stageStats(const Trace &trace, Device device, std::optional<std::int64_t> peakTimeNs)
{
    std::vector<StageStats> stats(trace.stageNames.size());
    for (std::uint32_t s = 0; s < stats.size(); ++s)
        stats[s].name = trace.stageNames[s];
    // The device's allocated bytes after each of its events, for the highest in a span.
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    std::vector<std::int64_t> times, totals;
    std::int64_t total = 0;
    for (std::size_t i = 0; deviceIndex && i < trace.events.size(); ++i) {
        if (lanes.deviceOfLane[trace.events.lane(i)] != *deviceIndex)
            continue;
        total += trace.events.deltaBytes(i);
        times.push_back(trace.events.timeNs(i));
        totals.push_back(total);
    }
    // The highest of each block of totals, so a long span reads blocks, not every event.
    constexpr std::size_t kBlock = 256;
    std::vector<std::int64_t> blockHighest((totals.size() + kBlock - 1) / kBlock, INT64_MIN);
    for (std::size_t i = 0; i < totals.size(); ++i)
        blockHighest[i / kBlock] = std::max(blockHighest[i / kBlock], totals[i]);
    const auto highestIn = [&](std::size_t begin, std::size_t end) { // [begin, end) of totals
        std::int64_t highest = 0;
        while (begin < end && begin % kBlock != 0)
            highest = std::max(highest, totals[begin++]);
        for (; begin + kBlock <= end; begin += kBlock)
            highest = std::max(highest, blockHighest[begin / kBlock]);
        for (; begin < end; ++begin)
            highest = std::max(highest, totals[begin]);
        return highest;
    };
    for (const Range &range : trace.ranges) {
        if (range.stage == kNoStage)
            continue;
        StageStats &stage = stats[range.stage];
        ++stage.spans;
        stage.totalNs += range.durationNs();
        // What was held as the span began, and after each event within it.
        auto first = std::upper_bound(times.begin(), times.end(), range.beginNs);
        const auto last = std::lower_bound(first, times.end(), range.endNs);
        if (first != times.begin())
            --first;
        stage.highestBytes =
            std::max(stage.highestBytes, highestIn(std::size_t(first - times.begin()), std::size_t(last - times.begin())));
        if (peakTimeNs && range.beginNs <= *peakTimeNs && *peakTimeNs < range.endNs)
            stage.holdsPeak = true;
    }
    std::erase_if(stats, [](const StageStats &stage) { return stage.spans == 0; });
    std::stable_sort(stats.begin(), stats.end(), [](const StageStats &a, const StageStats &b) {
        return a.highestBytes != b.highestBytes ? a.highestBytes > b.highestBytes : a.name < b.name;
    });
    return stats;
}

} // namespace peaklens
