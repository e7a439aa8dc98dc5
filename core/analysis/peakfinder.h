// SPDX-License-Identifier: Apache-2.0
#pragma once
// The peak of allocated memory on each device, and what is live at the peak (or at any
// event), grouped by layer, category and call stack.

#include "core/trace/trace.h"
#include "lanedevices.h"
#include "liveblocks.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct DevicePeak
{
    Device device;
    std::int64_t allocatedBytes = 0;           // highest allocated bytes
    std::int64_t timeNs = 0;                   // when it was first reached
    std::optional<std::size_t> eventIndex;     // the event that reached it; none when nothing was allocated
    std::optional<std::int64_t> reservedBytes; // highest reserved bytes, when the trace has segments
    std::optional<std::int64_t> reservedTimeNs;
    std::optional<std::int64_t> reservedAtPeakBytes; // reserved bytes at timeNs
};

struct LiveGroup
{
    std::uint32_t key = 0; // layer index (kNoLayer for none), category code, stack id or site id
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
    std::uint32_t largestStack = 0; // the call stack of the group's largest block
};

struct LiveSet
{
    Device device;
    std::int64_t timeNs = 0;
    std::int64_t bytes = 0;
    std::vector<std::size_t> allocations; // indices of the allocating events, in time order
    std::vector<LiveGroup> byLayer;       // largest first
    std::vector<LiveGroup> byCategory;
    std::vector<LiveGroup> byStack; // by full call stack
    std::vector<LiveGroup> bySite;  // by allocation site (AllocationSites ids)
};

struct PeakReport
{
    std::vector<DevicePeak> devices;    // one per device with memory events or segments
    std::optional<std::size_t> primary; // index into devices of the highest peak
    std::optional<LiveSet> liveAtPeak;  // on the primary device
};

PeakReport findPeaks(const Trace &trace);

// Peaks count the bytes each allocation asked for, as PyTorch's memory_viz does. What
// torch.cuda.max_memory_allocated counts instead is the caching allocator's blocks, each
// rounded up to a multiple of 512 bytes at least: that sum over the live set (a lower bound
// of what the allocator held), for a CUDA device
// whose allocator rounds so (no roundup_power2_divisions in its PYTORCH_CUDA_ALLOC_CONF);
// none for other devices and for traces recorded without the caching allocator.
std::optional<std::int64_t> cachingAllocatorBytes(const Trace &trace, const LiveSet &live);

// What the trace's bytes count, in a phrase for beside its peak: "in bytes requested, as
// memory_viz counts them; at least 12.98 GiB in the allocator's blocks, as
// torch.cuda.max_memory_allocated counts them" for a snapshot (the blocks' own sizes,
// where a state-only snapshot names them). Kineto reports the allocator's block sizes, so
// its peak is already what max_memory_allocated counts.
std::string peakCountingNote(const Trace &trace, const std::optional<LiveSet> &liveAtPeak);

// Sorts a report's devices and names the highest peak primary (the first of equal ones).
void choosePrimary(PeakReport &report);

// The scans behind findPeaks and the live sets, fed a trace's events in time order a
// chunk at a time: `add(events, first)` takes events that are the trace's from index
// `first` on. findPeaks feeds the whole trace at once; a reader streaming a file feeds
// its chunks and drops them. Both read the trace's lanes and reserved events, not its
// events.
class PeakScan
{
public:
    explicit PeakScan(const Trace &trace);
    void add(const MemoryEvents &events, std::size_t first);
    // The peaks and their reserved figures; no live set.
    PeakReport finish() const;

private:
    const Trace &m_trace;
    LaneDevices m_lanes;
    std::vector<DevicePeak> m_peaks;
    std::vector<std::int64_t> m_current;
    std::vector<bool> m_used;
};

// What is live on `device` once the events before index `end` have been applied.
class LiveSetScan
{
public:
    LiveSetScan(const Trace &trace, Device device, std::size_t end, std::int64_t timeNs);
    void add(const MemoryEvents &events, std::size_t first);
    LiveSet finish() const;
    // The live set on `device` from a table that may hold other devices' blocks too
    // (LayerScan's, which a one-pass summary shares).
    static LiveSet fromBlocks(const Trace &trace, Device device, const LiveBlocks &live, std::int64_t timeNs);

private:
    const Trace &m_trace;
    LaneDevices m_lanes;
    std::optional<std::uint32_t> m_device;
    std::size_t m_end;
    LiveSet m_set;
    LiveBlocks m_live;
};
// What is live on `device` right after event `eventIndex` has been applied.
LiveSet liveSetAfter(const Trace &trace, Device device, std::size_t eventIndex);
// The same at a time: after every event at or before timeNs.
LiveSet liveSetAt(const Trace &trace, Device device, std::int64_t timeNs);

} // namespace peaklens
