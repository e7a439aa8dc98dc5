// SPDX-License-Identifier: Apache-2.0
#include "blockindex.h"

#include "lanedevices.h"

#include "core/error.h"
#include "core/trace/addressmap.h"

#include <algorithm>

namespace peaklens {

BlockIndex::BlockIndex(const Trace &trace, Device device)
    : m_events(&trace.events)
{
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    if (!deviceIndex)
        return;
    const MemoryEvents &events = trace.events;
    if (events.size() >= kOpen)
        throw Error("The trace has too many events to index its blocks.");
    AddressMap<std::uint32_t> open; // address -> block
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != *deviceIndex)
            continue;
        const std::int64_t delta = events.deltaBytes(i);
        if (delta > 0) {
            // An address allocated again without a free: the old block is never freed, as
            // the series counts it.
            open.insertOrAssign(events.addr(i), static_cast<std::uint32_t>(m_allocation.size()));
            m_allocation.push_back(static_cast<std::uint32_t>(i));
            m_free.push_back(kOpen);
        } else if (delta < 0) {
            if (std::uint32_t *block = open.find(events.addr(i))) {
                m_free[*block] = static_cast<std::uint32_t>(i);
                open.erase(block);
            }
        }
    }
    m_chunkEndNs.assign((m_allocation.size() + kChunk - 1) / kChunk, INT64_MIN);
    for (std::size_t b = 0; b < m_allocation.size(); ++b)
        m_chunkEndNs[b / kChunk] = std::max(m_chunkEndNs[b / kChunk], endNs(b));
}

std::vector<std::size_t> BlockIndex::liveAt(std::int64_t timeNs) const
{
    std::vector<std::size_t> live;
    // Blocks are numbered in time order: those allocated by timeNs come first.
    const auto end = std::partition_point(m_allocation.begin(), m_allocation.end(),
                                          [&](std::uint32_t event) { return m_events->timeNs(event) <= timeNs; })
                     - m_allocation.begin();
    for (std::size_t chunk = 0; chunk * kChunk < static_cast<std::size_t>(end); ++chunk) {
        if (m_chunkEndNs[chunk] <= timeNs)
            continue; // every block of it was freed by then
        for (std::size_t b = chunk * kChunk; b < std::min((chunk + 1) * kChunk, static_cast<std::size_t>(end)); ++b) {
            if (endNs(b) > timeNs)
                live.push_back(b);
        }
    }
    return live;
}

std::vector<std::size_t> BlockIndex::liveAllocationsAt(std::int64_t timeNs) const
{
    std::vector<std::size_t> events = liveAt(timeNs);
    for (std::size_t &b : events)
        b = m_allocation[b];
    return events;
}

std::uint32_t bandKeyOf(const Trace &trace, const TimelineSeries &timeline, std::size_t event)
{
    if (timeline.groupBy == GroupBy::Category)
        return static_cast<std::uint32_t>(trace.events.category(event));
    return layerAtDepth(trace, trace.events.layer(event), timeline.layerDepth);
}

std::optional<std::size_t> blockAtHeight(const Trace &trace, const BlockIndex &index, const TimelineSeries &timeline,
                                         const std::vector<std::uint32_t> &bandKeys, std::int64_t timeNs,
                                         std::int64_t heightBytes)
{
    if (heightBytes < 0)
        return std::nullopt;
    const std::vector<std::size_t> live = index.liveAt(timeNs);
    // Each band's blocks stay oldest first: liveAt returns them in allocation order.
    std::vector<std::vector<std::size_t>> bands(bandKeys.size() + 1);
    for (std::size_t b : live) {
        const std::uint32_t key = bandKeyOf(trace, timeline, index.allocation(b));
        const auto band = std::find(bandKeys.begin(), bandKeys.end(), key) - bandKeys.begin();
        bands[static_cast<std::size_t>(band)].push_back(b);
    }
    std::int64_t bottom = 0;
    for (const auto &band : bands) {
        for (std::size_t b : band) {
            bottom += trace.events.deltaBytes(index.allocation(b));
            if (heightBytes < bottom)
                return b;
        }
    }
    return std::nullopt;
}

} // namespace peaklens
