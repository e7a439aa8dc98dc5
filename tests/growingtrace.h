// SPDX-License-Identifier: Apache-2.0
#pragma once
// A whole trace handed to an analysis the way a follower hands a run being written: its
// events a piece at a time, each range and step once an event past its end has come (they
// are written when they end), kept sorted by begin as the follower keeps them.

#include "core/trace/trace.h"
#include "core/trace/tracegrowth.h"

#include <algorithm>
#include <functional>

namespace peaklens::test {

// Calls `take` with the growing trace and what it gained, after each piece and once more,
// complete, with every row of `whole`.
inline void growPieceByPiece(const Trace &whole, std::size_t piece,
                             const std::function<void(const Trace &growing, const TraceGrowth &growth)> &take)
{
    Trace growing;
    growing.meta = whole.meta;
    growing.lanes = whole.lanes;
    growing.layers = whole.layers;
    growing.stacks = whole.stacks;
    growing.kernelNames = whole.kernelNames;
    std::vector<bool> rangeTaken(whole.ranges.size()), stepTaken(whole.steps.size());
    // Adds the rows of `rows` that `ready` accepts and are not yet in, sorted by begin: the
    // index of the first row that moved or came.
    const auto addRows = [](auto &into, const auto &rows, std::vector<bool> &taken, auto ready) {
        std::size_t from = into.size();
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (taken[i] || !ready(rows[i]))
                continue;
            taken[i] = true;
            const auto at = std::upper_bound(into.begin(), into.end(), rows[i],
                                             [](const auto &a, const auto &b) { return a.beginNs < b.beginNs; });
            from = std::min(from, static_cast<std::size_t>(at - into.begin()));
            into.insert(at, rows[i]);
        }
        return from;
    };
    const auto all = [](const auto &) { return true; };
    for (std::size_t from = 0; from < whole.events.size(); from += piece) {
        const std::size_t to = std::min(from + piece, whole.events.size());
        growing.events.append(whole.events, from, to);
        const std::int64_t newestNs = whole.events.timeNs(to - 1);
        const auto ended = [&](const auto &row) { return row.endNs <= newestNs; };
        TraceGrowth growth;
        growth.eventsFrom = from;
        growth.reservedFrom = growing.reserved.size();
        while (growing.reserved.size() < whole.reserved.size() && whole.reserved[growing.reserved.size()].timeNs <= newestNs)
            growing.reserved.push_back(whole.reserved[growing.reserved.size()]);
        growth.rangesFrom = addRows(growing.ranges, whole.ranges, rangeTaken, ended);
        growth.stepsFrom = addRows(growing.steps, whole.steps, stepTaken, ended);
        growth.kernelsFrom = growing.kernels.size();
        take(growing, growth);
    }
    TraceGrowth last;
    last.eventsFrom = growing.events.size();
    last.reservedFrom = growing.reserved.size();
    growing.reserved.insert(growing.reserved.end(), whole.reserved.begin() + static_cast<std::ptrdiff_t>(growing.reserved.size()),
                            whole.reserved.end());
    last.rangesFrom = addRows(growing.ranges, whole.ranges, rangeTaken, all);
    last.stepsFrom = addRows(growing.steps, whole.steps, stepTaken, all);
    last.kernelsFrom = 0;
    growing.kernels = whole.kernels;
    growing.markers = whole.markers;
    last.complete = true;
    take(growing, last);
}

} // namespace peaklens::test
