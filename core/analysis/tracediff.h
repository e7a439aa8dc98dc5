// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two traces compared at their peaks (two snapshots, a run and its rerun, before and after
// a change): the peaks and step times side by side, and what was live at each peak by
// layer, allocation site and category, matched by name so that traces whose layer and
// stack tables differ still compare.

#include "core/analysis/blockgroups.h"
#include "core/analysis/seriespoint.h"
#include "core/analysis/tracesummary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

// The headline figures of one trace.
struct PeakFigures
{
    std::optional<Device> device;              // of the primary peak; none when nothing was allocated
    std::int64_t peakBytes = 0;                // allocated at the primary peak
    std::optional<std::int64_t> reservedBytes; // highest reserved on that device, when the trace has segments
    std::optional<std::int64_t> peakStep;      // the step holding the peak
    std::optional<std::int64_t> stepTimeNs;    // median duration of the trace's steps, when it has any
    std::int64_t liveBlocks = 0;               // blocks live at the peak
};

PeakFigures peakFigures(const Trace &trace, const TraceSummary &summary);

// One layer, allocation site or category live at the peaks of trace A and trace B.
struct DiffRow
{
    // What the row is: a layer's module path in trace A (in B where A lacks it; the two
    // match by layerMatchKey, so a layer whose lines moved is one row), "(no layer)" for
    // blocks outside any, an allocation site's label (AllocationSites::label, so that the same code
    // checked out elsewhere still matches), a category's name.
    std::string key;
    std::string detail; // sites: the naming frame with its full path, A's when A has the site
    std::int64_t bytesA = 0, bytesB = 0;
    std::int64_t blocksA = 0, blocksB = 0;

    std::int64_t deltaBytes() const { return bytesB - bytesA; }
    // "new" (in B alone), "gone" (in A alone), "grew", "shrank", or "moved" (the same bytes
    // in other blocks).
    std::string_view change() const
    {
        return blocksA == 0 ? "new" : blocksB == 0 ? "gone" : bytesB > bytesA ? "grew" : bytesB < bytesA ? "shrank" : "moved";
    }
};

// B's allocated bytes over the step that holds A's peak, laid onto A's clock phase by
// phase (stepalignment.h), beside A's own over that step.
struct AlignedStep
{
    std::int64_t step = 0;
    std::vector<SeriesPoint> a; // on A's clock
    std::vector<SeriesPoint> b; // B's step of the same number, mapped onto A's clock
};

struct TraceDiff
{
    PeakFigures a, b;
    // Only rows whose bytes or blocks differ; the largest change (either way) first. byGroup
    // by the grouping asked for, when one was (blockgroups.h).
    std::vector<DiffRow> byLayer, bySite, byCategory, byGroup;
    std::optional<AlignedStep> curves; // when A's peak lies in a step that B has too

    std::int64_t peakDeltaBytes() const { return b.peakBytes - a.peakBytes; }
    // Nothing differs at the peaks: bytes, blocks, groups and reserved peaks alike.
    bool samePeaks() const;
};

TraceDiff diffTraces(const Trace &a, const TraceSummary &summaryA, const Trace &b, const TraceSummary &summaryB,
                     const std::optional<BlockGrouping> &grouping = std::nullopt);

} // namespace peaklens
