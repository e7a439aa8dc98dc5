#pragma once
// The peak of allocated memory on each device, and what is live at the peak (or at any
// event), grouped by layer, category and call stack.

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

struct DevicePeak
{
    Device device;
    std::int64_t allocatedBytes = 0;      // highest allocated bytes
    std::int64_t timeNs = 0;              // when it was first reached
    std::optional<std::size_t> eventIndex; // the event that reached it; none when nothing was allocated
    std::optional<std::int64_t> reservedBytes;       // highest reserved bytes, when the trace has segments
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
    std::vector<LiveGroup> byStack;       // by full call stack
    std::vector<LiveGroup> bySite;        // by allocation site (AllocationSites ids)
};

struct PeakReport
{
    std::vector<DevicePeak> devices;        // one per device with memory events or segments
    std::optional<std::size_t> primary;     // index into devices of the highest peak
    std::optional<LiveSet> liveAtPeak;      // on the primary device
};

PeakReport findPeaks(const Trace &trace);
// What is live on `device` right after event `eventIndex` has been applied.
LiveSet liveSetAfter(const Trace &trace, Device device, std::size_t eventIndex);
// The same at a time: after every event at or before timeNs.
LiveSet liveSetAt(const Trace &trace, Device device, std::int64_t timeNs);

} // namespace peaklens
