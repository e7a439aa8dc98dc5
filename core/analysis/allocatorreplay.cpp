// SPDX-License-Identifier: Apache-2.0
#include "allocatorreplay.h"

#include "core/trace/metadata.h"

#include <algorithm>
#include <limits>

namespace peaklens {

namespace {

// The end of a range, kept inside the address space: snapshots hold addresses near 2^64.
std::uint64_t endOf(std::uint64_t addr, std::int64_t bytes)
{
    const auto size = static_cast<std::uint64_t>(std::max<std::int64_t>(bytes, 0));
    return addr + std::min(size, std::numeric_limits<std::uint64_t>::max() - addr);
}

std::int64_t lengthOf(std::uint64_t start, std::uint64_t end)
{
    return static_cast<std::int64_t>(end - start);
}

} // namespace

AllocatorReplay::AllocatorReplay(const Trace &trace, Device device)
    : m_trace(trace)
    , m_lanes(trace)
    , m_deviceIndex(m_lanes.indexOf(device))
    , m_device(device)
{
    m_expandable = trace.metaValue("allocator.expandable_segments") == "true";
    m_blocksKnown = trace.metaValue(metakey::AllocatorView) != "segments";
    m_addressesArePools = trace.metaValue(metakey::AllocatorMode) == "async";
    if (!m_deviceIndex) {
        m_nextEvent = trace.events.size();
        m_nextReserved = trace.reserved.size();
        return;
    }
    for (const ReservedEvent &event : trace.reserved) {
        if (!onDevice(event.lane))
            continue;
        if (event.addr != 0 && !m_addressesArePools) {
            m_layout = ReservedLayout::Segments;
            break;
        }
        m_layout = ReservedLayout::Totals;
    }
    skipOtherDevices();
}

void AllocatorReplay::skipOtherDevices()
{
    const MemoryEvents &events = m_trace.events;
    while (m_nextEvent < events.size() && !onDevice(events.lane(m_nextEvent)))
        ++m_nextEvent;
    while (m_nextReserved < m_trace.reserved.size() && !onDevice(m_trace.reserved[m_nextReserved].lane))
        ++m_nextReserved;
}

std::optional<std::int64_t> AllocatorReplay::nextTime() const
{
    std::optional<std::int64_t> time;
    if (m_nextEvent < m_trace.events.size())
        time = m_trace.events.timeNs(m_nextEvent);
    if (m_nextReserved < m_trace.reserved.size())
        time = std::min(time.value_or(INT64_MAX), m_trace.reserved[m_nextReserved].timeNs);
    return time;
}

void AllocatorReplay::applyNextTime()
{
    const auto time = nextTime();
    if (!time)
        return;
    const std::vector<ReservedEvent> &reserved = m_trace.reserved;
    m_deferred.clear();
    for (; m_nextReserved < reserved.size() && reserved[m_nextReserved].timeNs == *time; ++m_nextReserved) {
        const ReservedEvent &event = reserved[m_nextReserved];
        if (!onDevice(event.lane))
            continue;
        const bool placed = event.addr != 0 && !m_addressesArePools;
        if (placed && event.deltaBytes < 0 && holdsLiveBlocks(event.addr, endOf(event.addr, -event.deltaBytes)))
            m_deferred.push_back(event);
        else
            applyReserved(event);
    }
    const MemoryEvents &events = m_trace.events;
    for (; m_nextEvent < events.size() && events.timeNs(m_nextEvent) == *time; ++m_nextEvent) {
        if (onDevice(events.lane(m_nextEvent)))
            applyEvent(m_nextEvent);
    }
    for (const ReservedEvent &event : m_deferred)
        applyReserved(event);
    skipOtherDevices();
}

void AllocatorReplay::advanceTo(std::int64_t timeNs)
{
    for (auto time = nextTime(); time && *time <= timeNs; time = nextTime())
        applyNextTime();
}

void AllocatorReplay::applyEvent(std::size_t index)
{
    const std::uint64_t addr = m_trace.events.addr(index);
    const std::int64_t delta = m_trace.events.deltaBytes(index);
    auto block = m_blocks.find(addr);
    if (delta > 0) {
        if (block != m_blocks.end()) // its free was lost: the new block replaces it
            release(block);
        allocate(addr, delta, static_cast<std::uint32_t>(index));
    } else if (delta < 0 && block != m_blocks.end()) {
        release(block); // frees of blocks never seen allocated are ignored
    }
}

void AllocatorReplay::allocate(std::uint64_t addr, std::int64_t bytes, std::uint32_t event)
{
    const auto segment = segmentHolding(addr);
    const bool inSegment = segment != m_segments.end();
    m_blocks.emplace(addr, Block{bytes, event, inSegment});
    m_allocatedBytes += bytes;
    if (inSegment)
        cutRuns(addr, std::min(endOf(addr, bytes), segment->second.end));
    else
        m_outsideBytes += bytes;
}

void AllocatorReplay::release(Blocks::iterator block)
{
    const std::uint64_t addr = block->first;
    const Block freed = block->second;
    const auto next = m_blocks.erase(block);
    m_allocatedBytes -= freed.bytes;
    if (!freed.inSegment) {
        m_outsideBytes -= freed.bytes;
        return;
    }
    const auto segment = segmentHolding(addr);
    if (segment == m_segments.end())
        return;
    // The free run it leaves reaches from the block before it to the block after it.
    std::uint64_t from = segment->first;
    if (next != m_blocks.begin() && std::prev(next)->first >= segment->first)
        from = std::max(from, endOf(std::prev(next)->first, std::prev(next)->second.bytes));
    std::uint64_t to = segment->second.end;
    if (next != m_blocks.end())
        to = std::min(to, next->first);
    if (from < to) {
        cutRuns(from, to);
        addRun(from, to);
    }
}

void AllocatorReplay::applyReserved(const ReservedEvent &event)
{
    if (event.deltaBytes == 0)
        return;
    if (event.addr == 0 || m_addressesArePools) {
        m_unplacedBytes = std::max<std::int64_t>(0, m_unplacedBytes + event.deltaBytes);
        return;
    }
    const std::uint64_t end = endOf(event.addr, std::abs(event.deltaBytes));
    if (event.deltaBytes > 0) {
        unmapRange(event.addr, end); // a segment still known there was released unseen
        mapSegment(event.addr, end, event.lane);
        return;
    }
    // A release of memory the trace never saw reserved takes it from the unplaced reserve.
    const std::int64_t unseen = lengthOf(event.addr, end) - unmapRange(event.addr, end);
    m_unplacedBytes = std::max<std::int64_t>(0, m_unplacedBytes - unseen);
}

void AllocatorReplay::mapSegment(std::uint64_t addr, std::uint64_t end, std::uint32_t lane)
{
    if (addr >= end)
        return;
    auto segment = m_segments.emplace(addr, Segment{end, lane}).first;
    m_placedBytes += lengthOf(addr, end);
    // Blocks the trace placed here before it saw the segment move in.
    for (auto block = m_blocks.lower_bound(addr); block != m_blocks.end() && block->first < end; ++block) {
        if (!block->second.inSegment) {
            block->second.inSegment = true;
            m_outsideBytes -= block->second.bytes;
        }
    }
    // Expandable segments grow by mapping pages right after their end: one range, so free
    // runs continue across the seam.
    if (m_expandable && segment != m_segments.begin()) {
        const auto left = std::prev(segment);
        if (left->second.end == addr && left->second.lane == lane) {
            left->second.end = end;
            m_segments.erase(segment);
            segment = left;
        }
    }
    const auto right = std::next(segment);
    if (m_expandable && right != m_segments.end() && right->first == end && right->second.lane == lane) {
        segment->second.end = right->second.end;
        m_segments.erase(right);
    }
    refreshRuns(segment, addr, end);
}

void AllocatorReplay::refreshRuns(std::map<std::uint64_t, Segment>::const_iterator segment, std::uint64_t from, std::uint64_t to)
{
    const std::uint64_t start = segment->first, end = segment->second.end;
    // A block belongs where it starts; one that reaches into the window covers its start,
    // and the window grows over blocks that reach past its end.
    std::uint64_t cursor = from;
    auto block = m_blocks.lower_bound(from);
    if (block != m_blocks.begin() && std::prev(block)->first >= start)
        cursor = std::clamp(endOf(std::prev(block)->first, std::prev(block)->second.bytes), from, end);
    to = std::max(to, cursor);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
    for (; block != m_blocks.end() && block->first < to; ++block) {
        if (block->first > cursor)
            gaps.emplace_back(cursor, block->first);
        cursor = std::max(cursor, std::min(endOf(block->first, block->second.bytes), end));
        to = std::max(to, cursor);
    }
    if (cursor < to)
        gaps.emplace_back(cursor, to);
    cutRuns(from, to);
    for (const auto &[gapStart, gapEnd] : gaps)
        addRun(gapStart, gapEnd);
    if (from > start)
        joinRunsAt(from);
    if (to < end)
        joinRunsAt(to);
}

std::int64_t AllocatorReplay::unmapRange(std::uint64_t addr, std::uint64_t end)
{
    std::int64_t removed = 0;
    auto segment = m_segments.upper_bound(addr);
    if (segment != m_segments.begin() && std::prev(segment)->second.end > addr)
        --segment;
    while (segment != m_segments.end() && segment->first < end) {
        const std::uint64_t start = segment->first;
        const Segment cut = segment->second;
        segment = m_segments.erase(segment);
        removed += lengthOf(std::max(start, addr), std::min(cut.end, end));
        if (start < addr)
            m_segments.emplace(start, Segment{addr, cut.lane});
        if (end < cut.end)
            m_segments.emplace(end, Segment{cut.end, cut.lane});
    }
    if (removed == 0)
        return 0;
    m_placedBytes -= removed;
    cutRuns(addr, end);
    for (auto block = m_blocks.lower_bound(addr); block != m_blocks.end() && block->first < end; ++block) {
        if (block->second.inSegment) {
            block->second.inSegment = false;
            m_outsideBytes += block->second.bytes;
        }
    }
    // What those blocks covered of a segment left after the range is free now.
    if (const auto after = m_segments.find(end); after != m_segments.end()) {
        const auto next = m_blocks.lower_bound(end);
        refreshRuns(after, end, next != m_blocks.end() ? std::min(next->first, after->second.end) : after->second.end);
    }
    return removed;
}

bool AllocatorReplay::holdsLiveBlocks(std::uint64_t addr, std::uint64_t end) const
{
    const auto block = m_blocks.lower_bound(addr);
    return block != m_blocks.end() && block->first < end;
}

std::map<std::uint64_t, AllocatorReplay::Segment>::const_iterator AllocatorReplay::segmentHolding(std::uint64_t addr) const
{
    auto segment = m_segments.upper_bound(addr);
    if (segment == m_segments.begin())
        return m_segments.end();
    --segment;
    return addr < segment->second.end ? segment : m_segments.end();
}

void AllocatorReplay::addRun(std::uint64_t start, std::uint64_t end)
{
    if (start >= end)
        return;
    m_freeRuns.emplace(start, end);
    m_runLengths.insert(lengthOf(start, end));
    m_placedFreeBytes += lengthOf(start, end);
}

AllocatorReplay::Runs::iterator AllocatorReplay::removeRun(Runs::iterator run)
{
    const std::int64_t length = lengthOf(run->first, run->second);
    m_runLengths.erase(m_runLengths.find(length));
    m_placedFreeBytes -= length;
    return m_freeRuns.erase(run);
}

void AllocatorReplay::cutRuns(std::uint64_t start, std::uint64_t end)
{
    auto run = m_freeRuns.upper_bound(start);
    if (run != m_freeRuns.begin() && std::prev(run)->second > start)
        --run;
    while (run != m_freeRuns.end() && run->first < end) {
        const std::uint64_t from = run->first, to = run->second;
        run = removeRun(run);
        // Both pieces sort before `run`: runs do not overlap.
        addRun(from, std::min(start, to));
        addRun(std::max(end, from), to);
    }
}

void AllocatorReplay::joinRunsAt(std::uint64_t boundary)
{
    const auto right = m_freeRuns.find(boundary);
    if (right == m_freeRuns.end() || right == m_freeRuns.begin())
        return;
    const auto left = std::prev(right);
    if (left->second != boundary)
        return;
    const std::uint64_t start = left->first, end = right->second;
    removeRun(left);
    removeRun(right);
    addRun(start, end);
}

AllocatorReplay::Figures AllocatorReplay::figures() const
{
    Figures figures;
    figures.reservedBytes = m_placedBytes + m_unplacedBytes;
    figures.allocatedBytes = m_allocatedBytes;
    figures.placedFreeBytes = m_placedFreeBytes;
    figures.unplacedFreeBytes = std::max<std::int64_t>(0, m_unplacedBytes - m_outsideBytes);
    figures.freeBytes = figures.placedFreeBytes + figures.unplacedFreeBytes;
    figures.largestPlacedFreeBytes = m_runLengths.empty() ? 0 : *m_runLengths.rbegin();
    if (m_layout == ReservedLayout::Segments && m_blocksKnown && figures.unplacedFreeBytes == 0)
        figures.largestFreeBytes = figures.largestPlacedFreeBytes;
    return figures;
}

AllocatorState AllocatorReplay::state(std::int64_t timeNs) const
{
    AllocatorState state;
    state.device = m_device;
    state.timeNs = timeNs;
    state.layout = m_layout;
    state.blocksKnown = m_blocksKnown;
    state.expandableSegments = m_expandable;
    const Figures figures = this->figures();
    state.reservedBytes = figures.reservedBytes;
    state.allocatedBytes = figures.allocatedBytes;
    state.freeBytes = figures.freeBytes;
    state.unplacedReservedBytes = m_unplacedBytes;
    state.outsideBytes = m_outsideBytes;
    state.largestFreeBytes = figures.largestFreeBytes;
    state.segments.reserve(m_segments.size());
    for (const auto &[addr, segment] : m_segments) {
        AllocatorSegment shown;
        shown.addr = addr;
        shown.bytes = lengthOf(addr, segment.end);
        shown.lane = segment.lane;
        for (auto block = m_blocks.lower_bound(addr); block != m_blocks.end() && block->first < segment.end; ++block) {
            shown.blocks.push_back(AllocatorBlock{block->first, block->second.bytes, block->second.event});
            shown.allocatedBytes += block->second.bytes;
        }
        for (auto run = m_freeRuns.lower_bound(addr); run != m_freeRuns.end() && run->first < segment.end; ++run) {
            const std::int64_t length = lengthOf(run->first, run->second);
            shown.freeRuns.push_back(FreeRun{run->first, length});
            shown.freeBytes += length;
            shown.largestFreeBytes = std::max(shown.largestFreeBytes, length);
        }
        state.segments.push_back(std::move(shown));
    }
    for (const auto &[addr, block] : m_blocks) {
        if (!block.inSegment)
            state.outsideBlocks.push_back(AllocatorBlock{addr, block.bytes, block.event});
    }
    return state;
}

} // namespace peaklens
