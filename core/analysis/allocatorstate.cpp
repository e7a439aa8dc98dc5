// SPDX-License-Identifier: Apache-2.0
#include "allocatorstate.h"

#include "allocatorreplay.h"

namespace peaklens {

std::string_view reservedLayoutName(ReservedLayout layout)
{
    switch (layout) {
    case ReservedLayout::None:
        return "none";
    case ReservedLayout::Totals:
        return "totals";
    case ReservedLayout::Segments:
        return "segments";
    }
    return "none";
}

std::optional<double> AllocatorState::unusableShare(std::int64_t requestBytes) const
{
    if (!layoutKnown())
        return std::nullopt;
    if (reservedBytes <= 0)
        return 0.0;
    std::int64_t unusable = 0;
    for (const AllocatorSegment &segment : segments) {
        for (const FreeRun &run : segment.freeRuns) {
            if (run.bytes < requestBytes)
                unusable += run.bytes;
        }
    }
    return static_cast<double>(unusable) / static_cast<double>(reservedBytes);
}

AllocatorState allocatorStateAt(const Trace &trace, Device device, std::int64_t timeNs)
{
    AllocatorReplay replay(trace, device);
    replay.advanceTo(timeNs);
    return replay.state(timeNs);
}

AllocatorSeries allocatorSeries(const Trace &trace, Device device)
{
    AllocatorReplay replay(trace, device);
    AllocatorSeries series;
    series.device = device;
    series.layout = replay.layout();
    series.blocksKnown = replay.blocksKnown();
    series.expandableSegments = replay.expandableSegments();
    for (auto time = replay.nextTime(); time; time = replay.nextTime()) {
        replay.applyNextTime();
        const AllocatorReplay::Figures figures = replay.figures();
        series.points.push_back(
            AllocatorPoint{*time, figures.reservedBytes, figures.allocatedBytes, figures.freeBytes, figures.largestFreeBytes});
    }
    return series;
}

std::vector<SeriesPoint> largestFreeCurve(const Trace &trace, Device device)
{
    AllocatorReplay replay(trace, device);
    std::vector<SeriesPoint> curve;
    if (replay.layout() != ReservedLayout::Segments || !replay.blocksKnown())
        return curve;
    std::optional<SeriesPoint> last; // the newest point, kept back while the figure stays
    for (auto time = replay.nextTime(); time; time = replay.nextTime()) {
        replay.applyNextTime();
        const std::optional<std::int64_t> largest = replay.figures().largestFreeBytes;
        if (!largest)
            continue;
        if (curve.empty() || curve.back().bytes != *largest)
            curve.push_back({*time, *largest});
        last = SeriesPoint{*time, *largest};
    }
    if (last && curve.back().timeNs != last->timeNs)
        curve.push_back(*last);
    return curve;
}

} // namespace peaklens
