// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every block of one device as an interval, from the event that allocated it to the event
// that freed it, so the blocks live at any moment, and the block drawn at a given height
// of the stacked timeline, are found without replaying the trace.

#include "timelineseries.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

class BlockIndex
{
public:
    static constexpr std::size_t kNeverFreed = SIZE_MAX;

    // Reads the trace's events when asked: the trace must outlive the index. Throws Error
    // for a trace of more events than 32-bit indices reach.
    BlockIndex(const Trace &trace, Device device);

    std::size_t size() const { return m_allocation.size(); }
    // Index of the event that allocated block b, and of the one that freed it (kNeverFreed
    // when it outlives the trace, or another allocation reused its address unfreed).
    std::size_t allocation(std::size_t b) const { return m_allocation[b]; }
    std::size_t freeEvent(std::size_t b) const { return m_free[b] == kOpen ? kNeverFreed : m_free[b]; }
    // When the block ends: its free's time, else INT64_MAX.
    std::int64_t endNs(std::size_t b) const { return m_free[b] == kOpen ? INT64_MAX : m_events->timeNs(m_free[b]); }

    // The blocks allocated at or before `timeNs` and not freed by then, oldest first: what
    // the allocated series holds at that time.
    std::vector<std::size_t> liveAt(std::int64_t timeNs) const;
    // The allocating events of liveAt(timeNs).
    std::vector<std::size_t> liveAllocationsAt(std::int64_t timeNs) const;

private:
    static constexpr std::uint32_t kOpen = UINT32_MAX;
    static constexpr std::size_t kChunk = 64;

    // 8 bytes a block: the times are the events'.
    const MemoryEvents *m_events;
    std::vector<std::uint32_t> m_allocation; // increasing, so in time order
    std::vector<std::uint32_t> m_free;
    // Per kChunk blocks, when the last of them ends: a moment's search skips every chunk
    // freed before it, so it reads the blocks still live rather than all blocks begun.
    std::vector<std::int64_t> m_chunkEndNs;
};

// The band a block's allocating event falls in on `timeline`: its category, or its layer
// at the timeline's layer depth (kNoLayer outside any layer).
std::uint32_t bandKeyOf(const Trace &trace, const TimelineSeries &timeline, std::size_t event);

// The block drawn at `heightBytes` above the axis at `timeNs` when the live blocks are
// stacked band by band, bottom first in the order of `bandKeys` (blocks of keys not listed
// form one last band), each band's blocks oldest first. Unset above the stack's top.
std::optional<std::size_t> blockAtHeight(const Trace &trace, const BlockIndex &index, const TimelineSeries &timeline,
                                         const std::vector<std::uint32_t> &bandKeys, std::int64_t timeNs,
                                         std::int64_t heightBytes);

} // namespace peaklens
