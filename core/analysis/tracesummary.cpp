// SPDX-License-Identifier: Apache-2.0
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
    summary.eventCount = trace.events.size();
    if (!trace.events.empty()) {
        summary.firstNs = trace.events.timeNs(0);
        summary.lastNs = trace.events.timeNs(trace.events.size() - 1);
    }
    summary.peak = std::move(peaks);
    setStepTime(trace, summary);
    if (summary.peak.primary) {
        const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
        summary.steps = computeStepStats(trace, peak.device);
        setPeakFields(trace, trace.events, *peak.eventIndex, summary);
    }
    summary.layers = layers.get();
    return summary;
}

} // namespace

void setStepTime(const Trace &trace, TraceSummary &summary)
{
    summary.stepTimeNs = medianStepTimeNs(trace).value_or(summary.lastNs - summary.firstNs);
}

void setPeakFields(const Trace &trace, const MemoryEvents &events, std::size_t index, TraceSummary &summary)
{
    summary.peakPhase = events.phase(index);
    summary.peakLayer = events.layer(index);
    summary.peakStep.reset();
    if (auto step = trace.stepAt(events.timeNs(index)))
        summary.peakStep = trace.steps[*step].number;
}

TraceSummary summarize(const Trace &trace)
{
    auto layers = layerStatsBeside(trace);
    return summarize(trace, findPeaks(trace), std::move(layers));
}

TraceSummary summarize(const Trace &trace, PeakReport peaks)
{
    return summarize(trace, std::move(peaks), layerStatsBeside(trace));
}

SummaryScan::SummaryScan(const Trace &trace, std::optional<Peak> expected)
    : m_trace(trace)
    , m_expected(expected)
    , m_peaks(trace)
    , m_layers(trace)
{
    if (expected)
        m_steps.emplace(trace, expected->device);
}

void SummaryScan::add(const MemoryEvents &events, std::size_t first)
{
    if (events.empty())
        return;
    if (m_summary.eventCount == 0)
        m_summary.firstNs = events.timeNs(0);
    m_summary.lastNs = events.timeNs(events.size() - 1);
    m_summary.eventCount += events.size();
    m_peaks.add(events, first);
    if (m_steps)
        m_steps->add(events);
    if (m_expected && m_expected->eventIndex >= first && m_expected->eventIndex - first < events.size()) {
        // What is live right after the peak's event, from the layer scan's table.
        const std::size_t peak = m_expected->eventIndex - first;
        m_layers.add(events, first, 0, peak + 1);
        m_summary.peak.liveAtPeak = LiveSetScan::fromBlocks(m_trace, m_expected->device, m_layers.live(), events.timeNs(peak));
        m_layers.add(events, first, peak + 1, events.size());
        setPeakFields(m_trace, events, peak, m_summary);
    } else {
        m_layers.add(events, first);
    }
}

std::optional<SummaryScan::Peak> SummaryScan::foundPeak() const
{
    const PeakReport report = m_peaks.finish();
    if (!report.primary)
        return std::nullopt;
    const DevicePeak &peak = report.devices[*report.primary];
    return Peak{peak.device, *peak.eventIndex};
}

std::optional<TraceSummary> SummaryScan::finish()
{
    if (foundPeak() != m_expected)
        return std::nullopt;
    TraceSummary summary = std::move(m_summary);
    std::optional<LiveSet> liveAtPeak = std::move(summary.peak.liveAtPeak);
    summary.peak = m_peaks.finish();
    setStepTime(m_trace, summary);
    if (m_expected) {
        summary.peak.liveAtPeak = std::move(liveAtPeak);
        summary.steps = m_steps->finish();
    }
    summary.layers = m_layers.finish();
    return summary;
}

} // namespace peaklens
