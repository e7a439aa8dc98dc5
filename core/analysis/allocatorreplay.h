// SPDX-License-Identifier: Apache-2.0
#pragma once
// Replays one device's memory events and reserved events in time order and keeps the
// caching allocator's layout up to date: segments, the blocks in them, and the free runs
// between the blocks with their sizes ordered, so each change costs O(log n). The engine
// behind allocatorStateAt, allocatorSeries and analyseOutOfMemory.

#include "allocatorstate.h"
#include "lanedevices.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace peaklens {

class AllocatorReplay
{
public:
    AllocatorReplay(const Trace &trace, Device device);

    ReservedLayout layout() const { return m_layout; }
    bool blocksKnown() const { return m_blocksKnown; }
    bool expandableSegments() const { return m_expandable; }

    // The time of the next change on the device, none when all are applied.
    std::optional<std::int64_t> nextTime() const;
    // Applies every change at the next time: segments mapped first, then the events, then
    // segments released (a release that still holds live blocks waits for the events of
    // its moment, which usually free them).
    void applyNextTime();
    // Applies every change at or before timeNs.
    void advanceTo(std::int64_t timeNs);

    struct Figures
    {
        std::int64_t reservedBytes = 0;
        std::int64_t allocatedBytes = 0;
        std::int64_t freeBytes = 0;
        std::int64_t placedFreeBytes = 0;   // in free runs of known segments
        std::int64_t unplacedFreeBytes = 0; // in reserved memory without an address
        std::int64_t largestPlacedFreeBytes = 0;
        std::optional<std::int64_t> largestFreeBytes; // exact, when the layout is known
    };
    Figures figures() const;

    // The layout as it stands, for the time `timeNs`.
    AllocatorState state(std::int64_t timeNs) const;

private:
    struct Segment
    {
        std::uint64_t end = 0;
        std::uint32_t lane = 0;
    };
    struct Block
    {
        std::int64_t bytes = 0;
        std::uint32_t event = 0;
        bool inSegment = false;
    };
    using Blocks = std::map<std::uint64_t, Block>;
    using Runs = std::map<std::uint64_t, std::uint64_t>; // start -> end

    bool onDevice(std::uint32_t lane) const { return m_lanes.deviceOfLane[lane] == *m_deviceIndex; }
    void skipOtherDevices();

    void applyEvent(std::size_t index);
    void allocate(std::uint64_t addr, std::int64_t bytes, std::uint32_t event);
    void release(Blocks::iterator block);
    void applyReserved(const ReservedEvent &event);
    void mapSegment(std::uint64_t addr, std::uint64_t end, std::uint32_t lane);
    // Removes [addr, end) from the known segments; returns the bytes it removed.
    std::int64_t unmapRange(std::uint64_t addr, std::uint64_t end);
    // Recomputes the free runs of `segment` over [from, to), widened over blocks that reach
    // past it, and joins them to the runs on either side.
    void refreshRuns(std::map<std::uint64_t, Segment>::const_iterator segment, std::uint64_t from, std::uint64_t to);
    bool holdsLiveBlocks(std::uint64_t addr, std::uint64_t end) const;
    std::map<std::uint64_t, Segment>::const_iterator segmentHolding(std::uint64_t addr) const;

    void addRun(std::uint64_t start, std::uint64_t end);
    Runs::iterator removeRun(Runs::iterator run);
    void cutRuns(std::uint64_t start, std::uint64_t end);
    void joinRunsAt(std::uint64_t boundary);

    const Trace &m_trace;
    LaneDevices m_lanes;
    std::optional<std::uint32_t> m_deviceIndex;
    Device m_device;
    ReservedLayout m_layout = ReservedLayout::None;
    bool m_blocksKnown = true;
    bool m_expandable = false;
    bool m_addressesArePools = false;

    std::size_t m_nextEvent = 0;
    std::size_t m_nextReserved = 0;
    std::vector<ReservedEvent> m_deferred;

    std::map<std::uint64_t, Segment> m_segments;
    Blocks m_blocks;
    Runs m_freeRuns;
    std::multiset<std::int64_t> m_runLengths;
    std::int64_t m_placedBytes = 0;
    std::int64_t m_unplacedBytes = 0;
    std::int64_t m_allocatedBytes = 0;
    std::int64_t m_outsideBytes = 0;
    std::int64_t m_placedFreeBytes = 0;
};

} // namespace peaklens
