// SPDX-License-Identifier: Apache-2.0
#include "summaryfigures.h"

#include "core/error.h"
#include "core/format/columncodec.h"
#include "core/format/tracewriter.h"
#include "filesummary.h"

#include <algorithm>
#include <limits>

namespace peaklens {

namespace {

// The figures as one list of integers, in the order encodeFigures puts them.
class Values
{
public:
    void put(std::int64_t value) { m_values.push_back(value); }
    void put(std::optional<std::int64_t> value)
    {
        put(std::int64_t(value.has_value()));
        if (value)
            put(*value);
    }
    std::string bytes() const
    {
        std::string out;
        columncodec::putSigned(m_values, out);
        return out;
    }

private:
    std::vector<std::int64_t> m_values;
};

// Reads them back; any value out of its range is an Error.
class Cursor
{
public:
    explicit Cursor(std::string_view bytes)
        : m_values(columncodec::getAllSigned(bytes))
    {
    }

    std::int64_t next()
    {
        if (m_at == m_values.size())
            throw Error("the figures end early");
        return m_values[m_at++];
    }
    std::int64_t next(std::int64_t low, std::int64_t high)
    {
        const std::int64_t value = next();
        if (value < low || value > high)
            throw Error("a figure is out of range");
        return value;
    }
    std::uint32_t id(std::size_t count) { return static_cast<std::uint32_t>(next(0, static_cast<std::int64_t>(count) - 1)); }
    // A count of items of at least `values` values each.
    std::size_t count(std::size_t values)
    {
        return static_cast<std::size_t>(next(0, static_cast<std::int64_t>(left() / values)));
    }
    std::optional<std::int64_t> optional()
    {
        if (next(0, 1) == 0)
            return std::nullopt;
        return next();
    }
    bool done() const { return m_at == m_values.size(); }

private:
    std::size_t left() const { return m_values.size() - m_at; }

    std::vector<std::int64_t> m_values;
    std::size_t m_at = 0;
};

constexpr std::int64_t kMaxId = std::numeric_limits<std::uint32_t>::max();

void putGroups(Values &values, const std::vector<LiveGroup> &groups)
{
    values.put(static_cast<std::int64_t>(groups.size()));
    for (const LiveGroup &group : groups) {
        values.put(std::int64_t(group.key));
        values.put(group.bytes);
        values.put(group.blocks);
        values.put(std::int64_t(group.largestStack));
    }
}

// Keys below `keys` (or kNoLayer where `noLayer`), stacks the trace has.
std::vector<LiveGroup> groupsOf(Cursor &cursor, const Trace &trace, std::int64_t keys, bool noLayer = false)
{
    std::vector<LiveGroup> groups(cursor.count(4));
    for (LiveGroup &group : groups) {
        group.key = static_cast<std::uint32_t>(cursor.next(0, kMaxId));
        if (group.key >= keys && !(noLayer && group.key == kNoLayer))
            throw Error("a live group has an unknown key");
        group.bytes = cursor.next();
        group.blocks = cursor.next(0, INT64_MAX);
        group.largestStack = cursor.id(trace.stacks.stackCount());
    }
    return groups;
}

Device deviceOf(Cursor &cursor)
{
    const auto type = static_cast<DeviceType>(cursor.next(0, 1));
    return Device{type, static_cast<std::int16_t>(cursor.next(0, INT16_MAX))};
}

TraceSummary decode(std::string_view bytes, const Trace &trace)
{
    Cursor cursor(bytes);
    TraceSummary summary;
    summary.eventCount = static_cast<std::uint64_t>(cursor.next(0, INT64_MAX));
    summary.firstNs = cursor.next();
    summary.lastNs = cursor.next();
    summary.stepTimeNs = cursor.next();
    summary.peakStep = cursor.optional();
    summary.peakPhase = static_cast<Phase>(cursor.next(0, kPhaseCount - 1));
    summary.peakLayer = static_cast<std::uint32_t>(cursor.next(0, kMaxId));
    if (summary.peakLayer != kNoLayer && summary.peakLayer >= trace.layers.size())
        throw Error("the peak's layer is unknown");
    const auto events = static_cast<std::int64_t>(summary.eventCount);

    if (cursor.count(7) != trace.layers.size())
        throw Error("the figures are for other layers");
    for (std::size_t i = 0; i < trace.layers.size(); ++i) {
        LayerStats &layer = summary.layers.emplace_back();
        layer.layer = cursor.id(trace.layers.size());
        layer.activationBytes = cursor.next();
        layer.selfActivationBytes = cursor.next();
        layer.forwardNs = cursor.next();
        layer.backwardNs = cursor.next();
        layer.forwardCalls = cursor.next(0, INT64_MAX);
        layer.backwardCalls = cursor.next(0, INT64_MAX);
    }
    summary.steps.resize(cursor.count(9));
    for (StepStats &step : summary.steps) {
        step.number = cursor.next();
        step.beginNs = cursor.next();
        step.endNs = cursor.next();
        step.startBytes = cursor.next();
        step.peakAllocatedBytes = cursor.next();
        step.peakTimeNs = cursor.next();
        step.peakPhase = static_cast<Phase>(cursor.next(0, kPhaseCount - 1));
        step.allocatedBytes = cursor.next();
        step.allocations = cursor.next(0, INT64_MAX);
    }
    summary.peak.devices.resize(cursor.count(8));
    for (DevicePeak &peak : summary.peak.devices) {
        peak.device = deviceOf(cursor);
        peak.allocatedBytes = cursor.next();
        peak.timeNs = cursor.next();
        if (const auto index = cursor.optional()) {
            if (*index < 0 || *index >= events)
                throw Error("a peak's event is out of range");
            peak.eventIndex = static_cast<std::size_t>(*index);
        }
        peak.reservedBytes = cursor.optional();
        peak.reservedTimeNs = cursor.optional();
        peak.reservedAtPeakBytes = cursor.optional();
    }
    if (const auto primary = cursor.optional()) {
        if (*primary < 0 || *primary >= static_cast<std::int64_t>(summary.peak.devices.size()))
            throw Error("the primary peak is out of range");
        summary.peak.primary = static_cast<std::size_t>(*primary);
    }
    if (cursor.next(0, 1) == 1) {
        LiveSet &live = summary.peak.liveAtPeak.emplace();
        live.device = deviceOf(cursor);
        live.timeNs = cursor.next();
        live.bytes = cursor.next();
        live.allocations.resize(cursor.count(1));
        std::int64_t index = -1;
        for (std::size_t &allocation : live.allocations) {
            index += cursor.next(-index, events - 1 - index);
            allocation = static_cast<std::size_t>(index);
        }
        live.byLayer = groupsOf(cursor, trace, static_cast<std::int64_t>(trace.layers.size()), true);
        live.byCategory = groupsOf(cursor, trace, kCategoryCount);
        live.byStack = groupsOf(cursor, trace, static_cast<std::int64_t>(trace.stacks.stackCount()));
        live.bySite = groupsOf(cursor, trace, kMaxId);
    }
    if (!cursor.done())
        throw Error("values are left after the figures");
    return summary;
}

// Whether the figures say what the file's running totals say: its event count, and each
// device's highest allocated bytes and the event that first reached them.
bool agrees(const TraceSummary &summary, const TraceReader::StreamStart &start)
{
    if (summary.eventCount != start.events)
        return false;
    for (const TotalsPeak &total : start.peaks) {
        if (total.bytes <= 0)
            continue;
        const auto peak = std::find_if(summary.peak.devices.begin(), summary.peak.devices.end(),
                                       [&total](const DevicePeak &p) { return p.device == total.device; });
        if (peak == summary.peak.devices.end() || peak->allocatedBytes != total.bytes || peak->eventIndex != total.eventIndex)
            return false;
    }
    return true;
}

} // namespace

std::string encodeFigures(const TraceSummary &summary)
{
    Values values;
    values.put(static_cast<std::int64_t>(summary.eventCount));
    values.put(summary.firstNs);
    values.put(summary.lastNs);
    values.put(summary.stepTimeNs);
    values.put(summary.peakStep);
    values.put(static_cast<std::int64_t>(summary.peakPhase));
    values.put(std::int64_t(summary.peakLayer));
    values.put(static_cast<std::int64_t>(summary.layers.size()));
    for (const LayerStats &layer : summary.layers) {
        for (const std::int64_t value : {std::int64_t(layer.layer), layer.activationBytes, layer.selfActivationBytes,
                                         layer.forwardNs, layer.backwardNs, layer.forwardCalls, layer.backwardCalls})
            values.put(value);
    }
    values.put(static_cast<std::int64_t>(summary.steps.size()));
    for (const StepStats &step : summary.steps) {
        for (const std::int64_t value :
             {step.number, step.beginNs, step.endNs, step.startBytes, step.peakAllocatedBytes, step.peakTimeNs,
              static_cast<std::int64_t>(step.peakPhase), step.allocatedBytes, step.allocations})
            values.put(value);
    }
    const auto putDevice = [&values](Device device) {
        values.put(static_cast<std::int64_t>(device.type));
        values.put(std::int64_t(device.index));
    };
    values.put(static_cast<std::int64_t>(summary.peak.devices.size()));
    for (const DevicePeak &peak : summary.peak.devices) {
        putDevice(peak.device);
        values.put(peak.allocatedBytes);
        values.put(peak.timeNs);
        values.put(peak.eventIndex ? std::optional(static_cast<std::int64_t>(*peak.eventIndex)) : std::nullopt);
        values.put(peak.reservedBytes);
        values.put(peak.reservedTimeNs);
        values.put(peak.reservedAtPeakBytes);
    }
    values.put(summary.peak.primary ? std::optional(static_cast<std::int64_t>(*summary.peak.primary)) : std::nullopt);
    const std::optional<LiveSet> &live = summary.peak.liveAtPeak;
    values.put(std::int64_t(live.has_value()));
    if (live) {
        putDevice(live->device);
        values.put(live->timeNs);
        values.put(live->bytes);
        values.put(static_cast<std::int64_t>(live->allocations.size()));
        std::int64_t previous = -1;
        for (const std::size_t allocation : live->allocations) {
            values.put(static_cast<std::int64_t>(allocation) - previous);
            previous = static_cast<std::int64_t>(allocation);
        }
        for (const auto *groups : {&live->byLayer, &live->byCategory, &live->byStack, &live->bySite})
            putGroups(values, *groups);
    }
    return values.bytes();
}

std::optional<TraceSummary> storedSummary(const Trace &trace, const TraceReader::StreamStart &start)
{
    if (!start.figures || start.figures->analysis != kSummaryFiguresVersion)
        return std::nullopt;
    try {
        TraceSummary summary = decode(start.figures->bytes, trace);
        if (agrees(summary, start))
            return summary;
    } catch (const Error &) {
        // Damaged figures: the events say the same, read.
    }
    return std::nullopt;
}

void storeSummaryFigures(const std::string &path)
{
    const FileSummary file = summarizeFile(path, {}, StoredFigures::Ignore);
    TraceWriter::storeFigures(path, kSummaryFiguresVersion, file.summary.eventCount, encodeFigures(file.summary));
}

} // namespace peaklens
