#include "tracesummary.h"

namespace peaklens {

TraceSummary summarize(const Trace &trace)
{
    return summarize(trace, findPeaks(trace));
}

TraceSummary summarize(const Trace &trace, PeakReport peaks)
{
    TraceSummary summary;
    if (!trace.events.empty()) {
        summary.firstNs = trace.events.timeNs(0);
        summary.lastNs = trace.events.timeNs(trace.events.size() - 1);
    }
    summary.peak = std::move(peaks);
    summary.layers = computeLayerStats(trace);
    if (summary.peak.primary) {
        const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
        summary.steps = computeStepStats(trace, peak.device);
        const std::size_t i = *peak.eventIndex;
        summary.peakPhase = trace.events.phase(i);
        summary.peakLayer = trace.events.layer(i);
        if (auto step = trace.stepAt(peak.timeNs))
            summary.peakStep = trace.steps[*step].number;
    }
    return summary;
}

} // namespace peaklens
