// SPDX-License-Identifier: Apache-2.0
#pragma once
// The points of a series, immutable once shared: the timelines of one trace grouped by
// category and by layer hold the same totals (a 10M-event trace's are 160 MB), and a run
// followed live hands its growing totals to the views each time they grow. A copy shares
// the points (GrowingArray); the series it was copied from may go on growing.

#include "growingarray.h"
#include "seriespoint.h"

#include <span>
#include <vector>

namespace peaklens {

class SharedPoints
{
public:
    SharedPoints() = default;
    explicit SharedPoints(const std::vector<SeriesPoint> &points)
    {
        m_points.reserve(points.size());
        for (const SeriesPoint &point : points)
            m_points.push_back(point);
    }

    // Adds the bytes held from `timeNs` on; a point at the time of the last one replaces
    // it, unless a copy holds that one: then both stay, and the later one holds.
    void append(std::int64_t timeNs, std::int64_t bytes)
    {
        if (!m_points.empty() && m_points.back().timeNs == timeNs) {
            if (SeriesPoint *last = m_points.unsharedBack()) {
                last->bytes = bytes;
                return;
            }
        }
        m_points.push_back({timeNs, bytes});
    }
    void reserve(std::size_t points) { m_points.reserve(points); }

    const SeriesPoint *data() const { return m_points.data(); }
    std::size_t size() const { return m_points.size(); }
    bool empty() const { return m_points.empty(); }
    const SeriesPoint *begin() const { return m_points.begin(); }
    const SeriesPoint *end() const { return m_points.end(); }
    const SeriesPoint &operator[](std::size_t i) const { return m_points[i]; }
    const SeriesPoint &front() const { return m_points.front(); }
    const SeriesPoint &back() const { return m_points.back(); }

    std::span<const SeriesPoint> span() const { return {data(), size()}; }
    operator std::span<const SeriesPoint>() const { return span(); }
    std::vector<SeriesPoint> toVector() const { return {begin(), end()}; }

    bool operator==(const SharedPoints &other) const { return m_points == other.m_points; }

private:
    GrowingArray<SeriesPoint> m_points;
};

} // namespace peaklens
