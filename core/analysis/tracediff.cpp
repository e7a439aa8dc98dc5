// SPDX-License-Identifier: Apache-2.0
#include "tracediff.h"

#include "allocationsites.h"
#include "core/trace/layermatch.h"
#include "lanedevices.h"
#include "stepalignment.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

namespace peaklens {

namespace {

using Rows = std::map<std::string, DiffRow, std::less<>>;

using Naming = std::function<std::string(std::uint32_t)>;

// Adds one trace's groups to the rows; `match` is what matches a group across the traces,
// `label` what the row shows (the first trace's), `detail` adds to it.
void addGroups(Rows &rows, const std::vector<LiveGroup> &groups, bool isA, const Naming &match, const Naming &label,
               const Naming &detail = {})
{
    for (const LiveGroup &group : groups) {
        std::string key = match(group.key);
        auto found = rows.find(key);
        if (found == rows.end()) {
            found = rows.emplace(std::move(key), DiffRow{}).first;
            found->second.key = label(group.key);
            if (detail)
                found->second.detail = detail(group.key);
        }
        DiffRow &row = found->second;
        (isA ? row.bytesA : row.bytesB) += group.bytes;
        (isA ? row.blocksA : row.blocksB) += group.blocks;
    }
}

std::vector<DiffRow> changedRows(Rows &&rows)
{
    std::vector<DiffRow> out;
    for (auto &[key, row] : rows) {
        if (row.bytesA != row.bytesB || row.blocksA != row.blocksB)
            out.push_back(std::move(row));
    }
    // The map gave them in key order, which stays the order among equal changes.
    std::stable_sort(out.begin(), out.end(),
                     [](const DiffRow &x, const DiffRow &y) { return std::abs(x.deltaBytes()) > std::abs(y.deltaBytes()); });
    return out;
}

constexpr std::string_view kNoLayerLabel = "(no layer)";

std::string layerLabel(const Trace &trace, std::uint32_t layer)
{
    return layer < trace.layers.size() ? trace.layers[layer].path : std::string(kNoLayerLabel);
}

// The allocated bytes on `device` at the last event before `beginNs` (when there is one)
// and at every event in [beginNs, endNs): what alignedSeries needs of a step, without a
// point per event of the whole trace.
std::vector<SeriesPoint> allocatedAround(const Trace &trace, Device device, std::int64_t beginNs, std::int64_t endNs)
{
    std::vector<SeriesPoint> points;
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    if (!deviceIndex)
        return points;
    const MemoryEvents &events = trace.events;
    std::int64_t total = 0;
    std::optional<SeriesPoint> before;
    for (std::size_t i = 0; i < events.size() && events.timeNs(i) < endNs; ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != *deviceIndex)
            continue;
        total += events.deltaBytes(i);
        const std::int64_t t = events.timeNs(i);
        if (t < beginNs) {
            before = SeriesPoint{t, total};
            continue;
        }
        if (points.empty() && before)
            points.push_back(*before);
        if (!points.empty() && points.back().timeNs == t)
            points.back().bytes = total;
        else
            points.push_back({t, total});
    }
    if (points.empty() && before)
        points.push_back(*before);
    return points;
}

std::optional<AlignedStep> alignedCurves(const Trace &a, const PeakFigures &figuresA, const Trace &b, const PeakFigures &figuresB)
{
    if (!figuresA.peakStep || !figuresA.device || !figuresB.device)
        return std::nullopt;
    const auto own = alignSteps(a, a, figuresA.peakStep);
    const auto onA = alignSteps(b, a, figuresA.peakStep);
    if (!own || !onA)
        return std::nullopt;
    AlignedStep curves;
    curves.step = *figuresA.peakStep;
    curves.a = alignedSeries(allocatedAround(a, *figuresA.device, own->fromNs.front(), own->fromNs.back()), *own);
    curves.b = alignedSeries(allocatedAround(b, *figuresB.device, onA->fromNs.front(), onA->fromNs.back()), *onA);
    return curves;
}

} // namespace

PeakFigures peakFigures(const Trace &trace, const TraceSummary &summary)
{
    PeakFigures figures;
    figures.stepTimeNs = medianStepTimeNs(trace);
    if (!summary.peak.primary)
        return figures;
    const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
    figures.device = peak.device;
    figures.peakBytes = peak.allocatedBytes;
    figures.reservedBytes = peak.reservedBytes;
    figures.peakStep = summary.peakStep;
    if (summary.peak.liveAtPeak)
        figures.liveBlocks = static_cast<std::int64_t>(summary.peak.liveAtPeak->allocations.size());
    return figures;
}

bool TraceDiff::samePeaks() const
{
    return byLayer.empty() && bySite.empty() && byCategory.empty() && byGroup.empty() && a.peakBytes == b.peakBytes
           && a.reservedBytes == b.reservedBytes && a.liveBlocks == b.liveBlocks;
}

TraceDiff diffTraces(const Trace &a, const TraceSummary &summaryA, const Trace &b, const TraceSummary &summaryB,
                     const std::optional<BlockGrouping> &grouping)
{
    TraceDiff diff;
    diff.a = peakFigures(a, summaryA);
    diff.b = peakFigures(b, summaryB);

    Rows layers, sites, categories, groups;
    const auto addTrace = [&](const Trace &trace, const TraceSummary &summary, bool isA) {
        if (!summary.peak.liveAtPeak)
            return;
        const LiveSet &live = *summary.peak.liveAtPeak;
        // Layers match by their place in the model, so that moved lines still match.
        const std::vector<std::string> layerKeys = layerMatchKeys(trace);
        addGroups(
            layers, live.byLayer, isA,
            [&](std::uint32_t key) { return key < layerKeys.size() ? layerKeys[key] : std::string(kNoLayerLabel); },
            [&](std::uint32_t key) { return layerLabel(trace, key); });
        const Naming category = [](std::uint32_t key) { return std::string(categoryName(static_cast<Category>(key))); };
        addGroups(categories, live.byCategory, isA, category, category);
        const AllocationSites allocationSites(trace.stacks);
        const Naming site = [&](std::uint32_t key) { return allocationSites.label(key); };
        addGroups(sites, live.bySite, isA, site, site, [&](std::uint32_t key) { return allocationSites.location(key); });
        if (grouping) {
            for (const GroupRow &group : groupBlocks(trace, allocationSites, live, *grouping)) {
                DiffRow &row = groups.try_emplace(group.key, DiffRow{group.key, {}, 0, 0, 0, 0}).first->second;
                (isA ? row.bytesA : row.bytesB) += group.bytes;
                (isA ? row.blocksA : row.blocksB) += group.blocks;
            }
        }
    };
    addTrace(a, summaryA, true);
    addTrace(b, summaryB, false);
    diff.byLayer = changedRows(std::move(layers));
    diff.bySite = changedRows(std::move(sites));
    diff.byCategory = changedRows(std::move(categories));
    diff.byGroup = changedRows(std::move(groups));
    diff.curves = alignedCurves(a, diff.a, b, diff.b);
    return diff;
}

} // namespace peaklens
