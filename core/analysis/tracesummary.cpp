#include "tracesummary.h"

#include <future>

namespace peaklens {

namespace {

// The layer figures take a pass of their own over every event: on another core, beside
// the peak and the step figures.
std::future<std::vector<LayerStats>> layerStatsBeside(const Trace &trace)
{
    return std::async(std::launch::async, [&trace] { return computeLayerStats(trace); });
}

TraceSummary summarize(const Trace &trace, PeakReport peaks, std::future<std::vector<LayerStats>> layers)
{
    TraceSummary summary;
    if (!trace.events.empty()) {
        summary.firstNs = trace.events.timeNs(0);
        summary.lastNs = trace.events.timeNs(trace.events.size() - 1);
    }
    summary.peak = std::move(peaks);
    if (summary.peak.primary) {
        const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
        summary.steps = computeStepStats(trace, peak.device);
        const std::size_t i = *peak.eventIndex;
        summary.peakPhase = trace.events.phase(i);
        summary.peakLayer = trace.events.layer(i);
        if (auto step = trace.stepAt(peak.timeNs))
            summary.peakStep = trace.steps[*step].number;
    }
    summary.layers = layers.get();
    return summary;
}

} // namespace

TraceSummary summarize(const Trace &trace)
{
    auto layers = layerStatsBeside(trace);
    return summarize(trace, findPeaks(trace), std::move(layers));
}

TraceSummary summarize(const Trace &trace, PeakReport peaks)
{
    return summarize(trace, std::move(peaks), layerStatsBeside(trace));
}

} // namespace peaklens
