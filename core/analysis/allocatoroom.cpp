// SPDX-License-Identifier: Apache-2.0
#include "allocatorstate.h"

#include "allocatorreplay.h"

#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <cstdio>

#include <charconv>
#include <map>
#include <memory>

namespace peaklens {

std::string_view oomVerdictName(OomVerdict verdict)
{
    switch (verdict) {
    case OomVerdict::Fragmentation:
        return "fragmentation";
    case OomVerdict::LackOfMemory:
        return "lack of memory";
    case OomVerdict::Unknown:
        return "unknown";
    }
    return "unknown";
}

namespace {

std::optional<std::int64_t> number(std::string_view text)
{
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// The "device_free" the snapshot recorded with the failure on `device` at timeNs.
std::optional<std::int64_t> deviceFreeAt(const Trace &trace, Device device, std::int64_t timeNs)
{
    const std::string lines = trace.metaValue(kOomDeviceFreeKey);
    std::string_view rest = lines;
    while (!rest.empty()) {
        const std::size_t newline = rest.find('\n');
        const std::string_view line = rest.substr(0, newline);
        rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
        const std::size_t first = line.find(' ');
        const std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
        if (second == std::string_view::npos)
            continue;
        const auto onDevice = Device::parse(line.substr(0, first));
        const auto time = number(line.substr(first + 1, second - first - 1));
        const auto bytes = number(line.substr(second + 1));
        if (onDevice == device && time == timeNs && bytes)
            return bytes;
    }
    return std::nullopt;
}

std::string explain(const OomAnalysis &oom, const AllocatorReplay &replay, const AllocatorReplay::Figures &figures,
                    std::int64_t largestBound)
{
    const std::string request = formatBytes(oom.requestBytes);
    const std::string where = " on " + oom.device.toString();
    if (oom.layout == ReservedLayout::None)
        return "Allocating " + request + where
               + " failed, but the trace records no reserved memory, so whether fragmentation or a full GPU caused it "
                 "cannot be told.";
    const std::string reserved = formatBytes(oom.reservedBytes);
    if (!replay.blocksKnown())
        return "Allocating " + request + where + " failed with " + reserved
               + " reserved, but the trace saw only the allocator's segments, not the tensors in them, so how much of "
                 "it was free cannot be told.";
    const std::string free = formatBytes(oom.freeBytes);
    switch (oom.verdict) {
    case OomVerdict::LackOfMemory: {
        std::string outside;
        if (oom.deviceFreeBytes)
            outside = " and the GPU had only " + formatBytes(*oom.deviceFreeBytes) + " left outside PyTorch's cache";
        return "Allocating " + request + where + " failed because only " + free + " of the " + reserved + " reserved was free ("
               + formatBytes(oom.allocatedBytes) + " allocated)" + outside
               + ": the memory was used up, so the step must keep less (smaller batch, checkpointing), not merely "
                 "pack it better.";
    }
    case OomVerdict::Fragmentation: {
        const std::string largest = oom.largestFreeBytes ? "the largest free block was only " + formatBytes(largestBound)
                                                         : "no free block was larger than " + formatBytes(largestBound);
        const std::string fix = replay.expandableSegments()
                                    ? "release cached memory with torch.cuda.empty_cache() before the step, or allocate "
                                      "long-lived tensors first"
                                    : "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or release cached memory "
                                      "with torch.cuda.empty_cache()";
        return "Allocating " + request + where + " failed although " + free + " of the " + reserved
               + " reserved was free: " + largest + ", so the free memory was fragmented; " + fix + ".";
    }
    case OomVerdict::Unknown:
        break;
    }
    if (oom.layout == ReservedLayout::Totals)
        return "Allocating " + request + where + " failed with " + free + " of the " + reserved
               + " reserved free, enough in total, but the trace records reserved memory only as totals, so whether "
                 "it was fragmented cannot be told.";
    if (figures.largestPlacedFreeBytes < oom.requestBytes)
        return "Allocating " + request + where + " failed with " + free + " of the " + reserved
               + " reserved free, enough in total, but " + formatBytes(figures.unplacedFreeBytes)
               + " of it lies in segments whose addresses the trace does not hold, so whether it was fragmented "
                 "cannot be told.";
    return "Allocating " + request + where + " failed although a free block of " + formatBytes(figures.largestPlacedFreeBytes)
           + " could have held it; the allocator keeps blocks apart by stream, and requests of 1 MiB or less apart "
             "from larger ones, so that block was likely not one this request could use.";
}

// The allocator as the replay has it at timeNs, as the figures of a failure there.
OomAnalysis analysisAt(AllocatorReplay &replay, Device device, std::int64_t timeNs)
{
    replay.advanceTo(timeNs);
    const AllocatorReplay::Figures figures = replay.figures();
    OomAnalysis analysis;
    analysis.device = device;
    analysis.timeNs = timeNs;
    analysis.reservedBytes = figures.reservedBytes;
    analysis.allocatedBytes = figures.allocatedBytes;
    analysis.freeBytes = figures.freeBytes;
    analysis.largestFreeBytes = figures.largestFreeBytes;
    analysis.layout = replay.layout();
    return analysis;
}

} // namespace

std::vector<OomAnalysis> analyseOutOfMemory(const Trace &trace)
{
    const LaneDevices lanes(trace);
    // Markers are in time order, so each device's replay only moves forward.
    std::map<std::uint32_t, std::unique_ptr<AllocatorReplay>> replays;
    std::vector<OomAnalysis> result;
    for (std::size_t i = 0; i < trace.markers.size(); ++i) {
        const Marker &marker = trace.markers[i];
        if (marker.kind != MarkerKind::OutOfMemory)
            continue;
        const std::uint32_t deviceIndex = lanes.deviceOfLane[marker.lane];
        const Device device = lanes.devices[deviceIndex];
        auto &replay = replays[deviceIndex];
        if (!replay)
            replay = std::make_unique<AllocatorReplay>(trace, device);
        OomAnalysis oom = analysisAt(*replay, device, marker.timeNs);
        const AllocatorReplay::Figures figures = replay->figures();
        oom.marker = i;
        oom.requestBytes = marker.bytes;
        oom.deviceFreeBytes = deviceFreeAt(trace, device, marker.timeNs);
        // Free memory without an address may be one run: it bounds the largest block too.
        const std::int64_t largestBound = std::max(figures.largestPlacedFreeBytes, figures.unplacedFreeBytes);
        if (oom.layout == ReservedLayout::None || !replay->blocksKnown())
            oom.verdict = OomVerdict::Unknown;
        else if (figures.freeBytes < oom.requestBytes)
            oom.verdict = OomVerdict::LackOfMemory;
        else if (oom.layout == ReservedLayout::Segments && largestBound < oom.requestBytes)
            oom.verdict = OomVerdict::Fragmentation;
        else
            oom.verdict = OomVerdict::Unknown;
        oom.explanation = explain(oom, *replay, figures, largestBound);
        result.push_back(std::move(oom));
    }
    return result;
}

bool isStateOnly(const Trace &trace)
{
    return trace.metaValue(metakey::History) == "none";
}

OomAnalysis judgeDumpState(const Trace &trace, Device device)
{
    AllocatorReplay replay(trace, device);
    OomAnalysis state = analysisAt(replay, device, trace.events.empty() ? 0 : trace.events.timeNs(trace.events.size() - 1));
    const AllocatorReplay::Figures figures = replay.figures();
    state.marker = SIZE_MAX;
    const std::string head = "On " + device.toString() + ", ";
    if (state.layout == ReservedLayout::None || !replay.blocksKnown()) {
        state.explanation = head + formatBytes(state.allocatedBytes) + " is allocated; without "
                            + (state.layout == ReservedLayout::None ? "the reserved segments" : "the tensors in the segments")
                            + " whether a failure here was a full device or fragmentation cannot be told.";
        return state;
    }
    const double freeShare =
        state.reservedBytes > 0 ? static_cast<double>(state.freeBytes) / static_cast<double>(state.reservedBytes) : 0.0;
    char share[32];
    std::snprintf(share, sizeof share, "%.1f %%", 100.0 * freeShare);
    const std::string figuresText = formatBytes(state.allocatedBytes) + " of the " + formatBytes(state.reservedBytes)
                                    + " reserved is allocated, " + formatBytes(state.freeBytes) + " (" + share
                                    + ") free in the cache";
    const std::int64_t largest =
        state.largestFreeBytes.value_or(std::max(figures.largestPlacedFreeBytes, figures.unplacedFreeBytes));
    if (freeShare < 0.05) {
        state.verdict = OomVerdict::LackOfMemory;
        state.explanation = head + figuresText
                            + ". Verdict: the device is full. A request that failed here failed for lack of memory: the "
                              "step must keep less (smaller batch, checkpointing), not merely pack it better.";
    } else if (state.layout == ReservedLayout::Segments && state.largestFreeBytes && largest * 4 < state.freeBytes) {
        state.verdict = OomVerdict::Fragmentation;
        state.explanation = head + figuresText + ", but in pieces of at most " + formatBytes(largest)
                            + ". Verdict: fragmentation. A request above " + formatBytes(largest) + " failed although "
                            + formatBytes(state.freeBytes)
                            + " was free: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or release cached memory "
                              "with torch.cuda.empty_cache().";
    } else {
        state.explanation = head + figuresText + ", the largest free block " + formatBytes(largest)
                            + ". Verdict: not fragmented. A request up to " + formatBytes(largest)
                            + " fit in the cache; a larger one needed device memory beyond it.";
    }
    return state;
}

} // namespace peaklens
