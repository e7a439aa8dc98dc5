// SPDX-License-Identifier: Apache-2.0
#include "peakfinder.h"

#include "allocationsites.h"

#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <algorithm>
#include <charconv>
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

LiveSet liveSetBefore(const Trace &trace, Device device, std::size_t endIndex, std::int64_t timeNs)
{
    LiveSetScan scan(trace, device, endIndex, timeNs);
    scan.add(trace.events, 0);
    return scan.finish();
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

PeakScan::PeakScan(const Trace &trace)
    : m_trace(trace)
    , m_lanes(trace)
    , m_peaks(m_lanes.devices.size())
    , m_current(m_lanes.devices.size(), 0)
    , m_used(m_lanes.devices.size(), false)
{
    for (std::size_t d = 0; d < m_peaks.size(); ++d)
        m_peaks[d].device = m_lanes.devices[d];
}

void PeakScan::add(const MemoryEvents &events, std::size_t first)
{
    const auto deltas = events.deltas();
    for (std::size_t i = 0; i < events.size(); ++i) {
        const std::uint32_t d = m_lanes.deviceOfLane[events.lane(i)];
        m_used[d] = true;
        m_current[d] += deltas[i];
        if (m_current[d] > m_peaks[d].allocatedBytes) {
            m_peaks[d].allocatedBytes = m_current[d];
            m_peaks[d].eventIndex = first + i;
            m_peaks[d].timeNs = events.timeNs(i);
        }
    }
}

PeakReport PeakScan::finish() const
{
    std::vector<DevicePeak> peaks = m_peaks;
    std::vector<bool> used = m_used;
    for (const ReservedEvent &event : m_trace.reserved)
        used[m_lanes.deviceOfLane[event.lane]] = true;
    addReservedFigures(m_trace, m_lanes, peaks);

    PeakReport report;
    for (std::size_t d = 0; d < peaks.size(); ++d) {
        if (used[d])
            report.devices.push_back(peaks[d]);
    }
    choosePrimary(report);
    return report;
}

void choosePrimary(PeakReport &report)
{
    std::stable_sort(report.devices.begin(), report.devices.end(),
                     [](const DevicePeak &a, const DevicePeak &b) { return a.device < b.device; });
    report.primary.reset();
    for (std::size_t d = 0; d < report.devices.size(); ++d) {
        if (report.devices[d].eventIndex
            && (!report.primary || report.devices[d].allocatedBytes > report.devices[*report.primary].allocatedBytes))
            report.primary = d;
    }
}

LiveSetScan::LiveSetScan(const Trace &trace, Device device, std::size_t end, std::int64_t timeNs)
    : m_trace(trace)
    , m_lanes(trace)
    , m_device(m_lanes.indexOf(device))
    , m_end(end)
{
    m_set.device = device;
    m_set.timeNs = timeNs;
}

void LiveSetScan::add(const MemoryEvents &events, std::size_t first)
{
    if (!m_device || first >= m_end)
        return;
    const std::size_t count = std::min(events.size(), m_end - first);
    for (std::size_t i = 0; i < count; ++i) {
        if (m_lanes.deviceOfLane[events.lane(i)] == *m_device)
            m_live.apply(events, i, first + i, *m_device);
    }
}

LiveSet LiveSetScan::finish() const
{
    return fromBlocks(m_trace, m_set.device, m_live, m_set.timeNs);
}

LiveSet LiveSetScan::fromBlocks(const Trace &trace, Device device, const LiveBlocks &live, std::int64_t timeNs)
{
    LiveSet set;
    set.device = device;
    set.timeNs = timeNs;
    const auto deviceIndex = LaneDevices(trace).indexOf(device);
    if (!deviceIndex)
        return set;
    const AllocationSites sites(trace.stacks);
    std::map<std::uint32_t, LiveGroup> byLayer, byCategory, byStack, bySite;
    std::map<std::uint32_t, std::int64_t> largestOfLayer, largestOfCategory, largestOfStack, largestOfSite;
    // In time order, as the groups' largest blocks are chosen: the first of equal ones.
    for (const LiveBlocks::Block &block : live.blocksInOrder()) {
        if (block.device != *deviceIndex)
            continue;
        set.allocations.push_back(block.event);
        set.bytes += block.bytes;
        addToGroup(byLayer, block.layer, block.bytes, block.stack, largestOfLayer);
        addToGroup(byCategory, static_cast<std::uint32_t>(block.category), block.bytes, block.stack, largestOfCategory);
        addToGroup(byStack, block.stack, block.bytes, block.stack, largestOfStack);
        addToGroup(bySite, sites.siteOf(block.stack), block.bytes, block.stack, largestOfSite);
    }
    set.byLayer = sortedGroups(byLayer);
    set.byCategory = sortedGroups(byCategory);
    set.byStack = sortedGroups(byStack);
    set.bySite = sortedGroups(bySite);
    return set;
}

PeakReport findPeaks(const Trace &trace)
{
    PeakScan scan(trace);
    scan.add(trace.events, 0);
    PeakReport report = scan.finish();
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

std::optional<std::int64_t> cachingAllocatorBytes(const Trace &trace, const LiveSet &live)
{
    const std::string format = trace.metaValue(metakey::SourceFormat);
    const bool cachingAllocator = format == "torch-snapshot";
    if (live.device.type != DeviceType::Cuda || !cachingAllocator
        || trace.metaValue("allocator.conf").find("roundup_power2_divisions") != std::string::npos)
        return std::nullopt;
    constexpr std::int64_t kMinBlockBytes = 512; // the caching allocator's kMinBlockSize
    std::int64_t bytes = 0;
    for (const std::size_t event : live.allocations)
        bytes += (trace.events.deltaBytes(event) + kMinBlockBytes - 1) / kMinBlockBytes * kMinBlockBytes;
    return bytes;
}

std::string peakCountingNote(const Trace &trace, const std::optional<LiveSet> &liveAtPeak)
{
    if (trace.metaValue(metakey::SourceFormat) == "kineto")
        return "in the allocator's blocks, as torch.cuda.max_memory_allocated counts them (the profiler reports block sizes)";
    std::string note = "in bytes requested, as memory_viz counts them";
    if (!liveAtPeak)
        return note;
    // A state-only snapshot names its blocks' own sizes; a trace's requests are rounded up to
    // 512 bytes at least, and a block can be larger still.
    const std::string device = liveAtPeak->device.toString() + " ";
    const std::string lines = trace.metaValue(metakey::BlockBytesAtDump);
    for (std::size_t at = 0; at < lines.size();) {
        const std::size_t end = std::min(lines.find('\n', at), lines.size());
        const std::string_view line = std::string_view(lines).substr(at, end - at);
        std::int64_t bytes = 0;
        if (line.starts_with(device)
            && std::from_chars(line.data() + device.size(), line.data() + line.size(), bytes).ec == std::errc())
            return note + "; " + formatBytes(bytes) + " in the allocator's blocks, as torch.cuda.memory_allocated counts them";
        at = end + 1;
    }
    if (const auto rounded = cachingAllocatorBytes(trace, *liveAtPeak))
        note +=
            "; at least " + formatBytes(*rounded) + " in the allocator's blocks, as torch.cuda.max_memory_allocated counts them";
    return note;
}

} // namespace peaklens
