#include "levelofdetail.h"

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

std::vector<ColumnRange> reduceToColumns(std::span<const SeriesPoint> series, std::int64_t beginNs,
                                         std::int64_t endNs, int columns)
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

} // namespace peaklens
