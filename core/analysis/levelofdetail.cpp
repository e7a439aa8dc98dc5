// SPDX-License-Identifier: Apache-2.0
#include "levelofdetail.h"

#include "lanedevices.h"

#include <algorithm>

namespace peaklens {

namespace {

auto firstAfter(std::span<const SeriesPoint> series, std::int64_t timeNs)
{
    return std::upper_bound(series.begin(), series.end(), timeNs,
                            [](std::int64_t t, const SeriesPoint &point) { return t < point.timeNs; });
}

} // namespace

std::int64_t valueAt(std::span<const SeriesPoint> series, std::int64_t timeNs)
{
    const auto after = firstAfter(series, timeNs);
    return after == series.begin() ? 0 : std::prev(after)->bytes;
}

SpanStats spanStats(const Trace &trace, const TimelineSeries &timeline, std::int64_t beginNs, std::int64_t endNs,
                    const SeriesBlocks *blocks)
{
    SpanStats stats;
    if (endNs <= beginNs)
        return stats;
    const ColumnRange column = reduceToColumns(timeline.allocated, beginNs, endNs, 1, blocks).front();
    stats.highestBytes = column.maxBytes;
    stats.lowestBytes = column.minBytes;
    // Events are sorted by time: only the span's are read.
    const MemoryEvents &events = trace.events;
    std::size_t low = 0, high = events.size();
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (events.timeNs(mid) < beginNs)
            low = mid + 1;
        else
            high = mid;
    }
    const LaneDevices lanes(trace);
    const auto device = lanes.indexOf(timeline.device);
    for (std::size_t i = low; i < events.size() && events.timeNs(i) < endNs; ++i) {
        if (!device || lanes.deviceOfLane[events.lane(i)] != *device)
            continue;
        (events.deltaBytes(i) > 0 ? stats.allocatedBytes : stats.freedBytes) += std::abs(events.deltaBytes(i));
    }
    return stats;
}

SeriesBlocks SeriesBlocks::build(std::span<const SeriesPoint> series)
{
    SeriesBlocks blocks;
    const std::size_t count = series.size() / kSize;
    blocks.minBytes.resize(count);
    blocks.maxBytes.resize(count);
    blocks.maxTimeNs.resize(count);
    for (std::size_t b = 0; b < count; ++b) {
        std::int64_t low = INT64_MAX, high = INT64_MIN, highTime = 0;
        for (std::size_t i = b * kSize; i < (b + 1) * kSize; ++i) {
            low = std::min(low, series[i].bytes);
            if (series[i].bytes > high) {
                high = series[i].bytes;
                highTime = series[i].timeNs;
            }
        }
        blocks.minBytes[b] = low;
        blocks.maxBytes[b] = high;
        blocks.maxTimeNs[b] = highTime;
    }
    return blocks;
}

std::vector<ColumnRange> reduceToColumns(std::span<const SeriesPoint> series, std::int64_t beginNs, std::int64_t endNs,
                                         int columns, const SeriesBlocks *blocks)
{
    std::vector<ColumnRange> out;
    if (columns <= 0 || endNs <= beginNs)
        return out;
    out.reserve(static_cast<std::size_t>(columns));
    const double width = static_cast<double>(endNs - beginNs) / columns;
    auto next = firstAfter(series, beginNs); // first point after the current time
    std::int64_t value = next == series.begin() ? 0 : std::prev(next)->bytes;
    for (int c = 0; c < columns; ++c) {
        ColumnRange column;
        column.beginNs = beginNs + static_cast<std::int64_t>(width * c);
        const std::int64_t columnEnd = c + 1 == columns ? endNs : beginNs + static_cast<std::int64_t>(width * (c + 1));
        for (; next != series.end() && next->timeNs <= column.beginNs; ++next)
            value = next->bytes; // what holds as the column begins
        column.minBytes = column.maxBytes = value;
        column.maxTimeNs = column.beginNs;
        for (; next != series.end() && next->timeNs < columnEnd; ++next) {
            // Whole blocks inside the column at once.
            auto index = static_cast<std::size_t>(next - series.begin());
            while (blocks && index % SeriesBlocks::kSize == 0 && index / SeriesBlocks::kSize < blocks->minBytes.size()
                   && series[index + SeriesBlocks::kSize - 1].timeNs < columnEnd) {
                const std::size_t b = index / SeriesBlocks::kSize;
                column.minBytes = std::min(column.minBytes, blocks->minBytes[b]);
                if (blocks->maxBytes[b] > column.maxBytes) {
                    column.maxBytes = blocks->maxBytes[b];
                    column.maxTimeNs = blocks->maxTimeNs[b];
                }
                index += SeriesBlocks::kSize;
                value = series[index - 1].bytes;
                next = series.begin() + static_cast<std::ptrdiff_t>(index);
            }
            if (next == series.end() || next->timeNs >= columnEnd)
                break;
            value = next->bytes;
            column.minBytes = std::min(column.minBytes, value);
            if (value > column.maxBytes) {
                column.maxBytes = value;
                column.maxTimeNs = next->timeNs;
            }
        }
        out.push_back(column);
    }
    return out;
}

std::vector<StackedColumn> stackColumns(const TimelineSeries &timeline, std::int64_t beginNs, std::int64_t endNs, int columns,
                                        const SeriesBlocks *blocks)
{
    std::vector<StackedColumn> out;
    for (const ColumnRange &range : reduceToColumns(timeline.allocated, beginNs, endNs, columns, blocks)) {
        StackedColumn column{range, {}};
        column.groupBytes.reserve(timeline.groups.size());
        for (const GroupSeries &group : timeline.groups)
            column.groupBytes.push_back(valueAt(group.points, range.maxTimeNs));
        out.push_back(std::move(column));
    }
    return out;
}

std::vector<std::vector<std::int64_t>> bandTops(const std::vector<StackedColumn> &columns, const std::vector<std::size_t> &bands)
{
    std::vector<std::vector<std::int64_t>> tops(bands.size(), std::vector<std::int64_t>(columns.size()));
    for (std::size_t c = 0; c < columns.size(); ++c) {
        std::int64_t top = 0;
        for (std::size_t b = 0; b < bands.size(); ++b) {
            top = bands[b] == kRestOfGroups ? columns[c].range.maxBytes : top + columns[c].groupBytes[bands[b]];
            tops[b][c] = top;
        }
    }
    return tops;
}

} // namespace peaklens
