// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reduces a memory series to what a chart of a given width can show, without dropping
// data: per pixel column the lowest and highest value held in it, and when the highest was
// reached. Timeline views and report charts draw from this; a peak is never lost.

#include "timelineseries.h"

#include <cstdint>
#include <span>
#include <vector>

namespace peaklens {

struct ColumnRange
{
    std::int64_t beginNs = 0; // the column's span of time
    std::int64_t minBytes = 0;
    std::int64_t maxBytes = 0;
    std::int64_t maxTimeNs = 0; // when maxBytes was first held in the column
};

// Lowest and highest value per block of kSize points, so that a column spanning many
// points reads their blocks instead (a zoomed-out 10M-point series: ~1 ms, not ~20).
struct SeriesBlocks
{
    static constexpr std::size_t kSize = 256;
    std::vector<std::int64_t> minBytes, maxBytes, maxTimeNs; // per whole block

    static SeriesBlocks build(std::span<const SeriesPoint> series);
};

// `columns` equal columns over [beginNs, endNs). A value holds from its point's time until
// the next point; before the first point the series is 0. `blocks`, when given, must be
// built from this series.
std::vector<ColumnRange> reduceToColumns(std::span<const SeriesPoint> series, std::int64_t beginNs, std::int64_t endNs,
                                         int columns, const SeriesBlocks *blocks = nullptr);

// A column of a stacked chart: the allocated range, and each group's bytes as they stood
// when the column's highest point was reached, so that the stack's top is that point.
struct StackedColumn
{
    ColumnRange range;
    std::vector<std::int64_t> groupBytes; // as timeline.groups
};

std::vector<StackedColumn> stackColumns(const TimelineSeries &timeline, std::int64_t beginNs, std::int64_t endNs, int columns,
                                        const SeriesBlocks *blocks = nullptr);

// The bands of a stacked chart: per band, per column, the band's top. `bands` lists the
// groups from the bottom up; kRestOfGroups stands for every group not listed, a band that
// reaches the column's highest point, so that the stack always meets the envelope.
inline constexpr std::size_t kRestOfGroups = SIZE_MAX;
std::vector<std::vector<std::int64_t>> bandTops(const std::vector<StackedColumn> &columns, const std::vector<std::size_t> &bands);

// The value the series holds at a time.
std::int64_t valueAt(std::span<const SeriesPoint> series, std::int64_t timeNs);

// What a span of a device's timeline holds: the highest and lowest allocated bytes, and
// what its events allocated and freed (a selection on the timeline).
struct SpanStats
{
    std::int64_t highestBytes = 0;
    std::int64_t lowestBytes = 0;
    std::int64_t allocatedBytes = 0;
    std::int64_t freedBytes = 0;
};
SpanStats spanStats(const Trace &trace, const TimelineSeries &timeline, std::int64_t beginNs, std::int64_t endNs,
                    const SeriesBlocks *blocks = nullptr);

} // namespace peaklens
