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
    std::int64_t firstNs = 0; // time span of the memory events
    std::int64_t lastNs = 0;
    PeakReport peak;
    std::vector<LayerStats> layers; // indexed like trace.layers
    std::vector<StepStats> steps;   // on the peak's device

    // The step, phase and layer of the event that reached the primary peak.
    std::optional<std::int64_t> peakStep;
    Phase peakPhase = Phase::Other;
    std::uint32_t peakLayer = kNoLayer;
};

TraceSummary summarize(const Trace &trace);
// The same with the trace's peaks already found (findPeaks), for callers that need them
// before the rest.
TraceSummary summarize(const Trace &trace, PeakReport peaks);

} // namespace peaklens
