#pragma once
// The points of a series, immutable and shared: the timelines of one trace grouped by
// category and by layer hold the same totals, and a 10M-event trace's totals are 160 MB.
// Reads like a const std::vector<SeriesPoint> (and converts to a span of its points).

#include "seriespoint.h"

#include <memory>
#include <span>
#include <vector>

namespace peaklens {

class SharedPoints
{
public:
    SharedPoints() = default;
    explicit SharedPoints(std::vector<SeriesPoint> points)
        : m_points(points.empty() ? nullptr : std::make_shared<const std::vector<SeriesPoint>>(std::move(points)))
    {
    }

    const SeriesPoint *data() const { return m_points ? m_points->data() : nullptr; }
    std::size_t size() const { return m_points ? m_points->size() : 0; }
    bool empty() const { return size() == 0; }
    const SeriesPoint *begin() const { return data(); }
    const SeriesPoint *end() const { return data() + size(); }
    const SeriesPoint &operator[](std::size_t i) const { return (*m_points)[i]; }
    const SeriesPoint &front() const { return m_points->front(); }
    const SeriesPoint &back() const { return m_points->back(); }

    // For code written against the vector.
    const std::vector<SeriesPoint> &vector() const { return m_points ? *m_points : emptyVector(); }
    operator const std::vector<SeriesPoint> &() const { return vector(); }

    bool operator==(const SharedPoints &other) const { return vector() == other.vector(); }

private:
    static const std::vector<SeriesPoint> &emptyVector()
    {
        static const std::vector<SeriesPoint> empty;
        return empty;
    }

    std::shared_ptr<const std::vector<SeriesPoint>> m_points;
};

} // namespace peaklens
