// SPDX-License-Identifier: Apache-2.0
#include "spantrace.h"

#include <algorithm>
#include <map>

namespace peaklens {

std::vector<ReservedEvent> reservedInWindow(const std::vector<ReservedEvent> &reserved, std::int64_t beginNs, std::int64_t endNs)
{
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> before;
    std::vector<ReservedEvent> kept;
    for (const ReservedEvent &event : reserved) {
        if (event.timeNs < beginNs)
            before[{event.lane, event.addr}] += event.deltaBytes;
        else if (event.timeNs <= endNs)
            kept.push_back(event);
    }
    std::vector<ReservedEvent> window;
    for (const auto &[key, bytes] : before) {
        if (bytes != 0)
            window.push_back(ReservedEvent{beginNs, bytes, key.second, key.first});
    }
    window.insert(window.end(), kept.begin(), kept.end());
    return window;
}

MemoryEvents carriedThen(const std::vector<LiveBlocks::Block> &carried, std::int64_t beginNs, const MemoryEvents &events,
                         std::size_t begin, std::size_t end)
{
    MemoryEvents result;
    result.reserve(carried.size() + (end - begin));
    for (const LiveBlocks::Block &block : carried) {
        result.append(
            MemoryEvent{beginNs, block.bytes, block.addr, block.lane, block.layer, block.stack, block.category, block.phase});
    }
    result.append(events, begin, end);
    return result;
}

namespace {

// The items of `items` (sorted by begin) that overlap [beginNs, endNs], none longer than `longestNs`.
template<typename T, typename Times>
std::vector<T> overlappingSorted(const std::vector<T> &items, std::int64_t beginNs, std::int64_t endNs, std::int64_t longestNs,
                                 Times times)
{
    const std::int64_t earliest = beginNs < INT64_MIN + longestNs ? INT64_MIN : beginNs - longestNs;
    const auto first = std::lower_bound(items.begin(), items.end(), earliest,
                                        [&](const T &item, std::int64_t t) { return times(item).first < t; });
    std::vector<T> kept;
    for (auto item = first; item != items.end() && times(*item).first <= endNs; ++item) {
        if (times(*item).second >= beginNs)
            kept.push_back(*item);
    }
    return kept;
}

template<typename T, typename Times>
void growLongest(std::int64_t &longestNs, const std::vector<T> &items, std::size_t from, Times times)
{
    for (std::size_t i = from; i < items.size(); ++i) {
        const auto [begin, end] = times(items[i]);
        longestNs = std::max(longestNs, end - begin);
    }
}

const auto rangeTimes = [](const Range &r) { return std::pair(r.beginNs, r.endNs); };
const auto stepTimes = [](const Step &s) { return std::pair(s.beginNs, s.endNs); };
const auto kernelTimes = [](const Kernel &k) { return std::pair(k.beginNs, k.endNs); };
const auto markerTimes = [](const Marker &m) { return std::pair(m.timeNs, m.timeNs); };

} // namespace

void SpanReach::grow(const Trace &trace, std::size_t rangesFrom, std::size_t stepsFrom, std::size_t kernelsFrom)
{
    growLongest(rangeNs, trace.ranges, rangesFrom, rangeTimes);
    growLongest(stepNs, trace.steps, stepsFrom, stepTimes);
    growLongest(kernelNs, trace.kernels, kernelsFrom, kernelTimes);
}

std::shared_ptr<Trace> spanTrace(const Trace &tables, MemoryEvents events, std::int64_t beginNs, std::int64_t endNs,
                                 const SpanReach *reach)
{
    auto result = std::make_shared<Trace>();
    result->meta = tables.meta;
    result->lanes = tables.lanes;
    result->layers = tables.layers;
    result->kernelNames = tables.kernelNames;
    result->stageNames = tables.stageNames;
    result->stacks = tables.stacks;
    result->events = std::move(events);
    result->reserved = reservedInWindow(tables.reserved, beginNs, endNs);
    if (reach) {
        result->ranges = overlappingSorted(tables.ranges, beginNs, endNs, reach->rangeNs, rangeTimes);
        result->steps = overlappingSorted(tables.steps, beginNs, endNs, reach->stepNs, stepTimes);
        result->kernels = overlappingSorted(tables.kernels, beginNs, endNs, reach->kernelNs, kernelTimes);
        result->markers = overlappingSorted(tables.markers, beginNs, endNs, 0, markerTimes);
    } else {
        result->ranges = overlapping(tables.ranges, beginNs, endNs, rangeTimes);
        result->steps = overlapping(tables.steps, beginNs, endNs, stepTimes);
        result->kernels = overlapping(tables.kernels, beginNs, endNs, kernelTimes);
        result->markers = overlapping(tables.markers, beginNs, endNs, markerTimes);
    }
    return result;
}

} // namespace peaklens
