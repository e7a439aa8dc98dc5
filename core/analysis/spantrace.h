// SPDX-License-Identifier: Apache-2.0
#pragma once
// A stretch of a trace as a trace of its own: the blocks live when it begins become
// allocations at its first instant (so every level in it is the whole trace's), then its
// events; its ranges, steps, kernels and markers are those that overlap it, and the
// segments reserved before it are carried in the same way. The app's window around the
// peak of a file too big to hold and the figures of each step of a run followed live
// are both such stretches.

#include "core/trace/trace.h"
#include "liveblocks.h"

#include <memory>
#include <vector>

namespace peaklens {

// The items of `items` that overlap [beginNs, endNs], as times() gives their span.
template<typename T, typename Times>
std::vector<T> overlapping(const std::vector<T> &items, std::int64_t beginNs, std::int64_t endNs, Times times)
{
    std::vector<T> kept;
    for (const T &item : items) {
        const auto [from, to] = times(item);
        if (to >= beginNs && from <= endNs)
            kept.push_back(item);
    }
    return kept;
}

// The segments reserved before `beginNs` and not yet given back, as one event per lane and
// address at `beginNs`, then the reserved events up to `endNs`.
std::vector<ReservedEvent> reservedInWindow(const std::vector<ReservedEvent> &reserved, std::int64_t beginNs, std::int64_t endNs);

// `carried` (in allocation order) as allocations at `beginNs`, then events [begin, end) of
// `events`: the memory events of a stretch.
MemoryEvents carriedThen(const std::vector<LiveBlocks::Block> &carried, std::int64_t beginNs, const MemoryEvents &events,
                         std::size_t begin, std::size_t end);

// The longest range, step and kernel of a trace: with its tables sorted by begin time, what
// overlaps a stretch begins at most that long before it, so a stretch's items are found
// without a pass over all of them. Kept up to date as a followed trace grows.
struct SpanReach
{
    std::int64_t rangeNs = 0;
    std::int64_t stepNs = 0;
    std::int64_t kernelNs = 0;

    // Takes in the items from these indices on (those added or moved since the last call).
    void grow(const Trace &trace, std::size_t rangesFrom, std::size_t stepsFrom, std::size_t kernelsFrom);
};

// `tables`' metadata, lanes, layers, stacks and kernel names with `events` (a stretch's,
// as carriedThen gives them) and what of the rest overlaps [beginNs, endNs]; with `reach`,
// its ranges, steps, kernels and markers are found by their begin times.
std::shared_ptr<Trace> spanTrace(const Trace &tables, MemoryEvents events, std::int64_t beginNs, std::int64_t endNs,
                                 const SpanReach *reach = nullptr);

} // namespace peaklens
