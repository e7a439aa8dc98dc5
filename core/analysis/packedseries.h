// SPDX-License-Identifier: Apache-2.0
#pragma once
// A memory series stored compactly, for the many groups of a timeline: a 10M-event trace
// puts 10M points into its groups in each grouping, 160 MB as SeriesPoints and about a
// third of that here. Points are kept in blocks of kBlockSize: the first in full, the
// others as their changes in time and bytes, each a variable-length integer. Reading a
// value decodes at most one block; iterating yields the points as they were appended.

#include "growingarray.h"
#include "seriespoint.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace peaklens {

class PackedSeries
{
public:
    static constexpr std::size_t kBlockSize = 32;

    class const_iterator
    {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = SeriesPoint;
        using difference_type = std::ptrdiff_t;
        using pointer = const SeriesPoint *;
        using reference = SeriesPoint;

        const_iterator() = default;
        SeriesPoint operator*() const { return m_point; }
        const SeriesPoint *operator->() const { return &m_point; }
        const_iterator &operator++()
        {
            if (++m_index < m_series->m_size)
                m_point = m_series->pointAfter(m_index, m_point, m_offset);
            return *this;
        }
        const_iterator operator++(int)
        {
            const_iterator before = *this;
            ++*this;
            return before;
        }
        bool operator==(const const_iterator &other) const { return m_index == other.m_index; }

    private:
        friend class PackedSeries;
        const_iterator(const PackedSeries *series, std::size_t index)
            : m_series(series)
            , m_index(index)
        {
            if (m_index < m_series->m_size)
                m_point = m_series->pointAfter(m_index, m_point, m_offset);
        }

        const PackedSeries *m_series = nullptr;
        std::size_t m_index = 0;
        std::size_t m_offset = 0; // in m_changes, of the next point's change
        SeriesPoint m_point;
    };

    void push_back(const SeriesPoint &point)
    {
        if (m_size % kBlockSize == 0) {
            m_blockTimes.push_back(point.timeNs);
            m_blockBytes.push_back(point.bytes);
            m_blockOffsets.push_back(m_changes.size());
        } else {
            appendVarint(zigzag(static_cast<std::uint64_t>(point.timeNs) - static_cast<std::uint64_t>(m_last.timeNs)));
            appendVarint(zigzag(static_cast<std::uint64_t>(point.bytes) - static_cast<std::uint64_t>(m_last.bytes)));
        }
        m_last = point;
        ++m_size;
    }

    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    const_iterator begin() const { return const_iterator(this, 0); }
    const_iterator end() const { return const_iterator(this, m_size); }
    const SeriesPoint &back() const { return m_last; }

    // The value held at a time (points sorted by time): that of the last point at or before
    // it, 0 before the first.
    std::int64_t valueAt(std::int64_t timeNs) const
    {
        const auto after = std::upper_bound(m_blockTimes.begin(), m_blockTimes.end(), timeNs);
        if (after == m_blockTimes.begin())
            return 0;
        const auto block = static_cast<std::size_t>(after - m_blockTimes.begin()) - 1;
        SeriesPoint point{m_blockTimes[block], m_blockBytes[block]};
        std::int64_t value = point.bytes;
        std::size_t offset = m_blockOffsets[block];
        const std::size_t end = std::min(m_size, (block + 1) * kBlockSize);
        for (std::size_t i = block * kBlockSize + 1; i < end; ++i) {
            point = pointAfter(i, point, offset);
            if (point.timeNs > timeNs)
                break;
            value = point.bytes;
        }
        return value;
    }

    std::vector<SeriesPoint> toVector() const { return {begin(), end()}; }

    // What its points take in memory.
    std::size_t storedBytes() const
    {
        return m_changes.size() + m_blockTimes.size() * (sizeof(std::int64_t) * 2 + sizeof(std::size_t));
    }

    bool operator==(const PackedSeries &other) const
    {
        return m_size == other.m_size && m_blockTimes == other.m_blockTimes && m_blockBytes == other.m_blockBytes
               && m_changes == other.m_changes;
    }

private:
    // Point `index`, from the one before it (whose change ended at `offset`): the first of
    // a block is stored whole.
    SeriesPoint pointAfter(std::size_t index, const SeriesPoint &before, std::size_t &offset) const
    {
        if (index % kBlockSize == 0) {
            const std::size_t block = index / kBlockSize;
            offset = m_blockOffsets[block];
            return {m_blockTimes[block], m_blockBytes[block]};
        }
        const std::uint64_t time = static_cast<std::uint64_t>(before.timeNs) + unzigzag(readVarint(offset));
        const std::uint64_t bytes = static_cast<std::uint64_t>(before.bytes) + unzigzag(readVarint(offset));
        return {static_cast<std::int64_t>(time), static_cast<std::int64_t>(bytes)};
    }

    // Changes are small either way: a sign bit moved to the bottom keeps them short.
    static std::uint64_t zigzag(std::uint64_t change) { return (change << 1) ^ (std::uint64_t(0) - (change >> 63)); }
    static std::uint64_t unzigzag(std::uint64_t stored) { return (stored >> 1) ^ (std::uint64_t(0) - (stored & 1)); }

    void appendVarint(std::uint64_t value)
    {
        for (; value >= 0x80; value >>= 7)
            m_changes.push_back(static_cast<std::uint8_t>(value | 0x80));
        m_changes.push_back(static_cast<std::uint8_t>(value));
    }
    std::uint64_t readVarint(std::size_t &offset) const
    {
        std::uint64_t value = 0;
        for (int shift = 0;; shift += 7) {
            const std::uint8_t byte = m_changes[offset++];
            value |= std::uint64_t(byte & 0x7F) << shift;
            if (!(byte & 0x80))
                return value;
        }
    }

    // Copies share what was stored (GrowingArray): a series that grows while a run is
    // followed is handed to the views at the cost of its newest points.
    GrowingArray<std::int64_t> m_blockTimes; // the first point of each block, whole
    GrowingArray<std::int64_t> m_blockBytes;
    GrowingArray<std::size_t> m_blockOffsets; // where each block's changes begin in m_changes
    GrowingArray<std::uint8_t> m_changes;     // per later point: its time's and bytes' change
    std::size_t m_size = 0;
    SeriesPoint m_last;
};

inline std::int64_t valueAt(const PackedSeries &series, std::int64_t timeNs)
{
    return series.valueAt(timeNs);
}

} // namespace peaklens
