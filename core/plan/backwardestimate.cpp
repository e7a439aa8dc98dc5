// SPDX-License-Identifier: Apache-2.0
#include "backwardestimate.h"

#include "core/analysis/lanedevices.h"

#include <algorithm>
#include <unordered_map>

namespace peaklens {

bool estimateBackwardSpans(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin,
                           std::int64_t end, std::vector<UnitSpans> &chain)
{
    const MemoryEvents &events = trace.events;
    std::int64_t forwardEnd = INT64_MIN;
    for (const UnitSpans &s : chain)
        forwardEnd = std::max(forwardEnd, s.forwardEnd);
    const auto inPass = [&](std::size_t i) {
        return lanes.deviceOfLane[events.lane(i)] == device && events.timeNs(i) >= begin && events.timeNs(i) < end;
    };
    std::optional<std::int64_t> backwardStart;
    for (std::size_t i = 0; i < events.size() && !backwardStart; ++i) {
        if (inPass(i) && events.phase(i) == Phase::Backward && events.deltaBytes(i) > 0 && events.timeNs(i) >= forwardEnd)
            backwardStart = events.timeNs(i);
    }
    if (!backwardStart)
        return false;
    std::unordered_map<std::uint64_t, std::size_t> savedBy; // live block -> the chain layer whose forward made it
    std::vector<std::int64_t> firstFree(chain.size(), INT64_MAX), lastFree(chain.size(), INT64_MIN);
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (!inPass(i))
            continue;
        const std::int64_t t = events.timeNs(i);
        if (events.deltaBytes(i) > 0) {
            savedBy.erase(events.addr(i));
            const auto layer = std::upper_bound(chain.begin(), chain.end(), t,
                                                [](std::int64_t time, const UnitSpans &s) { return time < s.forwardBegin; });
            if (t < *backwardStart && layer != chain.begin() && t <= std::prev(layer)->forwardEnd)
                savedBy[events.addr(i)] = static_cast<std::size_t>(std::prev(layer) - chain.begin());
        } else if (auto block = savedBy.find(events.addr(i)); block != savedBy.end()) {
            if (t >= *backwardStart) {
                firstFree[block->second] = std::min(firstFree[block->second], t);
                lastFree[block->second] = std::max(lastFree[block->second], t);
            }
            savedBy.erase(block);
        }
    }
    // Backward passes run in reverse chain order, each no earlier than the one after it.
    std::int64_t floor = *backwardStart;
    for (std::size_t k = chain.size(); k-- > 0;) {
        if (chain[k].backwardBegin < 0)
            chain[k].backwardBegin = std::max(floor, firstFree[k] == INT64_MAX ? floor : firstFree[k]);
        floor = chain[k].backwardBegin;
    }
    for (std::size_t k = 0; k < chain.size(); ++k) {
        if (chain[k].backwardEnd < 0)
            chain[k].backwardEnd = k > 0 ? chain[k - 1].backwardBegin : std::max(chain[k].backwardBegin, lastFree[k]);
    }
    return true;
}

} // namespace peaklens
