#include "peakfinder.h"

#include "allocationsites.h"
#include "lanedevices.h"
#include "liveblocks.h"

#include <algorithm>
#include <map>

namespace peaklens {

namespace {

std::vector<LiveGroup> sortedGroups(const std::map<std::uint32_t, LiveGroup> &groups)
{
    std::vector<LiveGroup> result;
    result.reserve(groups.size());
    for (const auto &[key, group] : groups)
        result.push_back(group);
    std::stable_sort(result.begin(), result.end(), [](const LiveGroup &a, const LiveGroup &b) { return a.bytes > b.bytes; });
    return result;
}

void addToGroup(std::map<std::uint32_t, LiveGroup> &groups, std::uint32_t key, std::int64_t bytes, std::uint32_t stack,
                std::map<std::uint32_t, std::int64_t> &largestBlock)
{
    LiveGroup &group = groups[key];
    group.key = key;
    group.bytes += bytes;
    ++group.blocks;
    if (std::int64_t &largest = largestBlock[key]; bytes > largest) {
        largest = bytes;
        group.largestStack = stack;
    }
}

// Live set on `device` after applying events [0, endIndex).
LiveSet liveSetBefore(const Trace &trace, Device device, std::size_t endIndex, std::int64_t timeNs)
{
    const LaneDevices lanes(trace);
    LiveSet set;
    set.device = device;
    set.timeNs = timeNs;
    const auto deviceIndex = lanes.indexOf(device);
    if (!deviceIndex)
        return set;
    LiveBlocks live(trace, lanes);
    const MemoryEvents &events = trace.events;
    for (std::size_t i = 0; i < endIndex; ++i) {
        if (lanes.deviceOfLane[events.lane(i)] == *deviceIndex)
            live.apply(i);
    }
    set.allocations = live.allocationIndices();
    const AllocationSites sites(trace.stacks);
    std::map<std::uint32_t, LiveGroup> byLayer, byCategory, byStack, bySite;
    std::map<std::uint32_t, std::int64_t> largestOfLayer, largestOfCategory, largestOfStack, largestOfSite;
    for (std::size_t i : set.allocations) {
        const std::int64_t bytes = events.deltaBytes(i);
        const std::uint32_t stack = events.stack(i);
        set.bytes += bytes;
        addToGroup(byLayer, events.layer(i), bytes, stack, largestOfLayer);
        addToGroup(byCategory, static_cast<std::uint32_t>(events.category(i)), bytes, stack, largestOfCategory);
        addToGroup(byStack, stack, bytes, stack, largestOfStack);
        addToGroup(bySite, sites.siteOf(stack), bytes, stack, largestOfSite);
    }
    set.byLayer = sortedGroups(byLayer);
    set.byCategory = sortedGroups(byCategory);
    set.byStack = sortedGroups(byStack);
    set.bySite = sortedGroups(bySite);
    return set;
}

void addReservedFigures(const Trace &trace, const LaneDevices &lanes, std::vector<DevicePeak> &peaks)
{
    std::vector<std::int64_t> current(lanes.devices.size(), 0);
    for (const ReservedEvent &event : trace.reserved) {
        const std::uint32_t d = lanes.deviceOfLane[event.lane];
        DevicePeak &peak = peaks[d];
        // Reserved at the allocated peak: every segment change up to and including its time.
        if (peak.eventIndex && event.timeNs > peak.timeNs && !peak.reservedAtPeakBytes)
            peak.reservedAtPeakBytes = current[d];
        current[d] += event.deltaBytes;
        if (!peak.reservedBytes || current[d] > *peak.reservedBytes) {
            peak.reservedBytes = current[d];
            peak.reservedTimeNs = event.timeNs;
        }
    }
    for (std::size_t d = 0; d < peaks.size(); ++d) {
        if (peaks[d].eventIndex && peaks[d].reservedBytes && !peaks[d].reservedAtPeakBytes)
            peaks[d].reservedAtPeakBytes = current[d];
    }
}

} // namespace

PeakReport findPeaks(const Trace &trace)
{
    const LaneDevices lanes(trace);
    std::vector<DevicePeak> peaks(lanes.devices.size());
    std::vector<std::int64_t> current(lanes.devices.size(), 0);
    std::vector<bool> used(lanes.devices.size(), false);
    for (std::size_t d = 0; d < peaks.size(); ++d)
        peaks[d].device = lanes.devices[d];

    const MemoryEvents &events = trace.events;
    const auto deltas = events.deltas();
    for (std::size_t i = 0; i < events.size(); ++i) {
        const std::uint32_t d = lanes.deviceOfLane[events.lane(i)];
        used[d] = true;
        current[d] += deltas[i];
        if (current[d] > peaks[d].allocatedBytes) {
            peaks[d].allocatedBytes = current[d];
            peaks[d].eventIndex = i;
            peaks[d].timeNs = events.timeNs(i);
        }
    }
    for (const ReservedEvent &event : trace.reserved)
        used[lanes.deviceOfLane[event.lane]] = true;
    addReservedFigures(trace, lanes, peaks);

    PeakReport report;
    for (std::size_t d = 0; d < peaks.size(); ++d) {
        if (used[d])
            report.devices.push_back(peaks[d]);
    }
    std::stable_sort(report.devices.begin(), report.devices.end(),
                     [](const DevicePeak &a, const DevicePeak &b) { return a.device < b.device; });
    for (std::size_t d = 0; d < report.devices.size(); ++d) {
        if (report.devices[d].eventIndex
            && (!report.primary || report.devices[d].allocatedBytes > report.devices[*report.primary].allocatedBytes))
            report.primary = d;
    }
    if (report.primary) {
        const DevicePeak &peak = report.devices[*report.primary];
        report.liveAtPeak = liveSetBefore(trace, peak.device, *peak.eventIndex + 1, peak.timeNs);
    }
    return report;
}

LiveSet liveSetAfter(const Trace &trace, Device device, std::size_t eventIndex)
{
    const std::size_t end = std::min(eventIndex + 1, trace.events.size());
    const std::int64_t timeNs = end > 0 ? trace.events.timeNs(end - 1) : 0;
    return liveSetBefore(trace, device, end, timeNs);
}

LiveSet liveSetAt(const Trace &trace, Device device, std::int64_t timeNs)
{
    const auto times = trace.events.timesNs();
    const auto end = static_cast<std::size_t>(std::upper_bound(times.begin(), times.end(), timeNs) - times.begin());
    return liveSetBefore(trace, device, end, timeNs);
}

} // namespace peaklens
