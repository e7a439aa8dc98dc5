// SPDX-License-Identifier: Apache-2.0
#pragma once
// The caching allocator's state on one device, as PyTorch's memory_viz shows it: the
// segments reserved at a moment with the blocks allocated inside them and the free runs
// between; reserved, allocated and largest free block over time; and, for each
// out-of-memory failure, whether fragmentation or a full GPU caused it.
//
// Where the reserved memory lies is known only as far as the trace says (`layout`).
// Snapshots and the collector's native view give segments with addresses; Kineto gives
// running totals only (reserved events at address 0), and so do cudaMallocAsync pools
// (allocator.mode "async": their events carry the pool, not a segment). Reserved memory
// without an address — what the snapshot importer cannot place (segments of old snapshots
// without addresses, more than the file's totals allow), added at address 0 — is
// "unplaced". A block that starts in no known segment is counted
// in `outsideBytes` and listed in `outsideBlocks`; it is assumed to lie in the unplaced
// reserve, so the unplaced free memory is max(0, unplaced − outside). Free memory is the
// free runs of the known segments plus that; it equals reserved − allocated whenever
// every block lies in reserved memory. Blocks are as large as the trace records them
// (the size asked for, in snapshots), so the allocator's rounding shows as free slivers.

#include "seriespoint.h"

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

enum class ReservedLayout : std::uint8_t {
    None,     // the trace records no reserved memory on the device
    Totals,   // reserved memory only as running totals, no segment addresses
    Segments, // segments with addresses (some reserved memory may still be unplaced)
};

std::string_view reservedLayoutName(ReservedLayout layout); // "none", "totals", "segments"

struct AllocatorBlock
{
    std::uint64_t addr = 0;
    std::int64_t bytes = 0;
    std::size_t event = 0; // index into trace.events of its allocation: layer, stack, category
    bool operator==(const AllocatorBlock &) const = default;
};

struct FreeRun
{
    std::uint64_t addr = 0;
    std::int64_t bytes = 0;
    bool operator==(const FreeRun &) const = default;
};

// One segment; with expandable segments, adjacent maps of one stream are one segment.
struct AllocatorSegment
{
    std::uint64_t addr = 0;
    std::int64_t bytes = 0;
    std::uint32_t lane = 0;             // the stream it belongs to
    std::vector<AllocatorBlock> blocks; // by address
    std::vector<FreeRun> freeRuns;      // by address
    std::int64_t allocatedBytes = 0;
    std::int64_t freeBytes = 0;
    std::int64_t largestFreeBytes = 0;
};

struct AllocatorState
{
    Device device;
    std::int64_t timeNs = 0;
    ReservedLayout layout = ReservedLayout::None;
    // False where the trace saw the allocator's segments but not the tensors in them
    // (allocator.view "segments"): allocated and free bytes then mean nothing.
    bool blocksKnown = true;
    bool expandableSegments = false; // allocator.expandable_segments

    std::vector<AllocatorSegment> segments;    // by address
    std::vector<AllocatorBlock> outsideBlocks; // in no known segment, by address

    std::int64_t reservedBytes = 0; // 0 when layout is None
    std::int64_t allocatedBytes = 0;
    std::int64_t freeBytes = 0;
    std::int64_t unplacedReservedBytes = 0;
    std::int64_t outsideBytes = 0;
    // The largest free run; absent unless the layout is known.
    std::optional<std::int64_t> largestFreeBytes;

    // Every free byte lies in a known free run: segments with addresses, blocks known, and
    // no unplaced reserved memory left free.
    bool layoutKnown() const { return largestFreeBytes.has_value(); }
    // The share of reserved memory that no single request of `requestBytes` could use:
    // free bytes in runs smaller than the request, over reserved. Absent unless the layout
    // is known; 0 when nothing is reserved.
    std::optional<double> unusableShare(std::int64_t requestBytes) const;
};

// The state after every change at or before timeNs.
AllocatorState allocatorStateAt(const Trace &trace, Device device, std::int64_t timeNs);

struct AllocatorPoint
{
    std::int64_t timeNs = 0;
    std::int64_t reservedBytes = 0;
    std::int64_t allocatedBytes = 0;
    std::int64_t freeBytes = 0;
    std::optional<std::int64_t> largestFreeBytes; // absent while the layout is not known
    bool operator==(const AllocatorPoint &) const = default;
};

// A step function: each point holds from its time until the next, one point per time at
// which an event or reserved event of the device happens.
struct AllocatorSeries
{
    Device device;
    ReservedLayout layout = ReservedLayout::None;
    bool blocksKnown = true;
    bool expandableSegments = false;
    std::vector<AllocatorPoint> points;
};

AllocatorSeries allocatorSeries(const Trace &trace, Device device);

// The largest free block over time, where the trace tells it: a step function (each point
// holds until the next) with a point only where the figure changes, and the last one. What
// the timeline draws; none of allocatorSeries' other figures are kept, and nothing is
// replayed where the layout cannot be known (no segments with addresses, or tensors
// hidden by the allocator).
std::vector<SeriesPoint> largestFreeCurve(const Trace &trace, Device device);

enum class OomVerdict : std::uint8_t {
    Fragmentation, // enough free reserved memory in total, but no free block large enough
    LackOfMemory,  // not enough free reserved memory even in total
    // The trace cannot tell: no reserved memory or tensors recorded, free memory whose
    // layout is unknown, or a free block large enough that the request could not use
    // (another stream's, or the other of the small and large pools).
    Unknown,
};

std::string_view oomVerdictName(OomVerdict verdict); // "fragmentation", "lack of memory", "unknown"

struct OomAnalysis
{
    std::size_t marker = 0; // index into trace.markers
    Device device;
    std::int64_t timeNs = 0;
    std::int64_t requestBytes = 0;
    std::int64_t reservedBytes = 0;
    std::int64_t allocatedBytes = 0;
    std::int64_t freeBytes = 0; // free reserved memory
    std::optional<std::int64_t> largestFreeBytes;
    // What cudaMemGetInfo reported free at the failure (snapshots' "device_free").
    std::optional<std::int64_t> deviceFreeBytes;
    ReservedLayout layout = ReservedLayout::None;
    OomVerdict verdict = OomVerdict::Unknown;
    std::string explanation; // one sentence with the figures
};

// One analysis per out-of-memory marker, in the markers' order.
std::vector<OomAnalysis> analyseOutOfMemory(const Trace &trace);

// A snapshot of the allocator's state alone, with no history (metakey::History "none", as
// an out-of-memory observer's _snapshot() or a bare _dump_snapshot() writes it): the state
// on `device` at dump time judged as a failure there would be. LackOfMemory when under 5 %
// of the reserved memory is free in the cache; Fragmentation when more is free but its
// largest block holds under a quarter of it; else Unknown (a request up to the largest free
// block fit, one above needed more device memory). requestBytes is 0: the file names none.
// Its explanation ("On cuda:0, ...") follows kStateOnlyHeadline where it is shown.
OomAnalysis judgeDumpState(const Trace &trace, Device device);

// True for a trace that holds the allocator's state at one moment and no history.
bool isStateOnly(const Trace &trace);
inline constexpr std::string_view kStateOnlyHeadline = "Allocator state at dump time; no history was recorded.";

// Metadata key under which the snapshot importer keeps each OOM's "device_free": one line
// per failure, "DEVICE TIME_NS BYTES" ("cuda:0 1500000 3145728").
inline constexpr std::string_view kOomDeviceFreeKey = "oom.device_free";

} // namespace peaklens
