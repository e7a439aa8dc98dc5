// SPDX-License-Identifier: Apache-2.0
#pragma once
// Everything `peaklens-cli summary` and reports show about one trace, computed in one go.

#include "core/trace/trace.h"
#include "layerstats.h"
#include "peakfinder.h"
#include "stepstats.h"

#include <optional>
#include <vector>

namespace peaklens {

struct TraceSummary
{
    std::uint64_t eventCount = 0;
    std::int64_t firstNs = 0; // time span of the memory events
    std::int64_t lastNs = 0;
    PeakReport peak;
    std::vector<LayerStats> layers; // indexed like trace.layers
    std::vector<StepStats> steps;   // on the peak's device
    // The step time every view shows: the median step's (medianStepTimeNs), else the span
    // of the memory events.
    std::int64_t stepTimeNs = 0;

    // The step, phase and layer of the event that reached the primary peak.
    std::optional<std::int64_t> peakStep;
    Phase peakPhase = Phase::Other;
    std::uint32_t peakLayer = kNoLayer;
};

// The figures of the event that reached the primary peak — `events` holds it at `index` —
// and the step time: what every producer of a summary leaves to this one function.
void setPeakFields(const Trace &trace, const MemoryEvents &events, std::size_t index, TraceSummary &summary);
// The step time alone, for a summary without a peak.
void setStepTime(const Trace &trace, TraceSummary &summary);

TraceSummary summarize(const Trace &trace);
// The same with the trace's peaks already found (findPeaks), for callers that need them
// before the rest.
TraceSummary summarize(const Trace &trace, PeakReport peaks);

// The same fed the events in time order a chunk at a time, in one pass, for a trace too
// big to hold: `trace` has every part but its events. The live set at the peak and the
// step figures need the peak's device and event before the pass; they are given as
// expected (a native file's running totals say), and finish() checks them.
class SummaryScan
{
public:
    struct Peak
    {
        Device device;
        std::size_t eventIndex = 0;
        bool operator==(const Peak &) const = default;
    };

    SummaryScan(const Trace &trace, std::optional<Peak> expected);
    void add(const MemoryEvents &events, std::size_t first);
    // Null when the peak was not where expected: then foundPeak() says where, for a
    // second pass.
    std::optional<TraceSummary> finish();
    std::optional<Peak> foundPeak() const;

private:
    const Trace &m_trace;
    std::optional<Peak> m_expected;
    PeakScan m_peaks;
    LayerScan m_layers; // its live blocks give the live set at the peak too
    std::optional<StepScan> m_steps;
    TraceSummary m_summary; // its figures as the pass finds them
};

} // namespace peaklens
