// SPDX-License-Identifier: Apache-2.0
#include "growinganalysis.h"

#include "core/plan/modeltimes.h"

#include "core/error.h"

#include <algorithm>

namespace peaklens {

GrowingAnalysis::GrowingAnalysis(ChainSelection chain)
    : m_chain(std::move(chain))
{
    m_live.setStepObserver([this](const Trace &span, std::size_t carried, const Step &step) { onStep(span, carried, step); });
}

void GrowingAnalysis::update(const Trace &trace, const TraceGrowth &growth)
{
    if (growth.restart) {
        GrowingAnalysis fresh(std::move(m_chain));
        fresh.m_work = work();
        *this = std::move(fresh);
        m_live.setStepObserver([this](const Trace &span, std::size_t carried, const Step &step) { onStep(span, carried, step); });
    }
    m_trace = &trace;
    if (!m_lanes || trace.lanes.size() != m_laneCount) {
        m_lanes.emplace(trace);
        m_laneCount = trace.lanes.size();
        m_usedDevices.resize(m_lanes->devices.size());
        m_reserved.resize(m_lanes->devices.size());
    }
    takeLayers(trace);
    // The peaks first: the timeline's device is the primary peak's.
    m_live.update(trace, growth);
    followPrimaryDevice(trace);
    takeEvents(trace, m_eventsTaken);
    takeReserved(trace, growth.restart ? 0 : std::min(growth.reservedFrom, m_reservedTaken));
    m_trace = nullptr;
}

void GrowingAnalysis::takeLayers(const Trace &trace)
{
    if (trace.layers.size() == m_layerCount)
        return;
    m_layerCount = trace.layers.size();
    m_layers.resize(m_layerCount);
    m_forwardSteps.resize(m_layerCount);
    m_backwardSteps.resize(m_layerCount);
    for (std::size_t i = 0; i < m_layerCount; ++i)
        m_layers[i].layer = static_cast<std::uint32_t>(i);
    m_work += m_layerCount;
    const int depth = blockDepth(trace, m_chain.layers.empty() ? defaultChain(trace) : m_chain.layers);
    m_bandOfLayer.resize(m_layerCount);
    for (std::uint32_t l = 0; l < m_layerCount; ++l)
        m_bandOfLayer[l] = layerAtDepth(trace, l, depth);
    if (depth != m_layerDepth && m_device) {
        // The blocks of the model appeared: the bands are drawn again from the first event.
        m_layerDepth = depth;
        m_byLayerGroups = TimelineGrouping();
        const MemoryEvents &events = trace.events;
        for (std::size_t i = 0; i < m_eventsTaken; ++i) {
            if (m_lanes->deviceOfLane[events.lane(i)] == *m_device)
                m_byLayerGroups.add(events.addr(i), events.deltaBytes(i), events.timeNs(i), bandOf(events.layer(i)));
        }
        m_work += m_eventsTaken;
    }
    m_layerDepth = depth;
}

void GrowingAnalysis::followPrimaryDevice(const Trace &trace)
{
    const auto primary = m_live.primary();
    if (!primary)
        return;
    const auto device = m_lanes->indexOf(m_live.peaks()[*primary].device);
    if (m_device == device && m_stepScan)
        return;
    // The first peak, or a device overtaking another: what is drawn and tabled for the
    // device starts over (once or twice a run, early).
    m_device = device;
    m_allocated = SharedPoints();
    m_reservedSeries = SharedPoints();
    m_allocatedBytes = 0;
    m_byCategoryGroups = TimelineGrouping();
    m_byLayerGroups = TimelineGrouping();
    m_eventsTaken = 0;
    m_reservedTaken = 0;
    m_usedDevices.assign(m_usedDevices.size(), false);
    m_reserved.assign(m_reserved.size(), Reserved());
    m_blocks = LiveBlocks();
    m_liveAtPeak.reset();
    m_liveAtPeakEvent.reset();
    Trace lanes;
    lanes.lanes = trace.lanes;
    m_stepScan.emplace(lanes, m_live.peaks()[*primary].device);
    m_stepEventsTaken = 0;
    const auto times = trace.events.timesNs();
    for (const LiveAnalysis::StepFigures &figures : m_live.steps()) {
        m_stepScan->addStep(figures.step);
        const auto end =
            static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), figures.step.endNs) - times.begin());
        m_stepScan->add(trace.events, m_stepEventsTaken, std::max(end, m_stepEventsTaken));
        m_stepEventsTaken = std::max(end, m_stepEventsTaken);
    }
    m_work += m_stepEventsTaken;
}

void GrowingAnalysis::takeEvents(const Trace &trace, std::size_t from)
{
    const MemoryEvents &events = trace.events;
    const std::size_t end = events.size();
    // What was live at the primary peak, if this batch reached it.
    std::optional<std::size_t> peakEvent;
    if (const auto primary = m_live.primary(); primary && m_live.peaks()[*primary].eventIndex)
        peakEvent = *m_live.peaks()[*primary].eventIndex;
    for (std::size_t i = from; i < end; ++i) {
        const std::uint32_t device = m_lanes->deviceOfLane[events.lane(i)];
        m_usedDevices[device] = true;
        m_blocks.apply(events, i, i, device);
        if (peakEvent && i == *peakEvent && m_liveAtPeakEvent != peakEvent) {
            m_liveAtPeak = LiveSetScan::fromBlocks(trace, m_lanes->devices[device], m_blocks, events.timeNs(i));
            m_liveAtPeakEvent = peakEvent;
            m_work += m_blocks.size();
        }
        if (i < m_eventsTaken || !m_device || device != *m_device)
            continue;
        const std::int64_t t = events.timeNs(i), delta = events.deltaBytes(i);
        m_allocatedBytes += delta;
        m_allocated.append(t, m_allocatedBytes);
        m_byCategoryGroups.add(events.addr(i), delta, t, static_cast<std::uint32_t>(events.category(i)));
        m_byLayerGroups.add(events.addr(i), delta, t, bandOf(events.layer(i)));
    }
    m_work += end - from;
    m_eventsTaken = end;
}

void GrowingAnalysis::takeReserved(const Trace &trace, std::size_t from)
{
    if (from < m_reservedTaken) {
        // A segment change landed before others: its device's figures are taken again.
        m_reserved.assign(m_reserved.size(), Reserved());
        m_reservedSeries = SharedPoints();
        from = 0;
    }
    for (std::size_t i = from; i < trace.reserved.size(); ++i) {
        const ReservedEvent &event = trace.reserved[i];
        const std::uint32_t device = m_lanes->deviceOfLane[event.lane];
        m_usedDevices[device] = true;
        Reserved &reserved = m_reserved[device];
        reserved.bytes += event.deltaBytes;
        if (!reserved.peakBytes || reserved.bytes > *reserved.peakBytes) {
            reserved.peakBytes = reserved.bytes;
            reserved.peakTimeNs = event.timeNs;
        }
        reserved.changes.push_back({event.timeNs, reserved.bytes});
        if (m_device && device == *m_device)
            m_reservedSeries.append(event.timeNs, reserved.bytes);
    }
    m_work += trace.reserved.size() - from;
    m_reservedTaken = trace.reserved.size();
}

void GrowingAnalysis::onStep(const Trace &span, std::size_t carried, const Step &step)
{
    const Trace &trace = *m_trace;
    // The step table: the trace's events up to the step's end, on the timeline's device.
    if (m_stepScan) {
        m_stepScan->addStep(step);
        const auto times = trace.events.timesNs();
        const auto end = static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), step.endNs) - times.begin());
        if (end > m_stepEventsTaken) {
            m_stepScan->add(trace.events, m_stepEventsTaken, end);
            m_work += end - m_stepEventsTaken;
            m_stepEventsTaken = end;
        }
    }
    m_stepTimesNs.push_back(step.durationNs());

    // The layer table: the activations this step's forward left for its backward (the
    // blocks carried from before it are an earlier step's), and its ranges' times.
    LayerScan scan(span);
    scan.add(span.events, 0, carried, span.events.size());
    const std::vector<LayerStats> stepLayers = scan.finish();
    std::vector<bool> forward(m_layers.size()), backward(m_layers.size());
    for (const Range &range : span.ranges) {
        if (range.step != step.number || range.layer >= m_layers.size())
            continue;
        LayerStats &stats = m_layers[range.layer];
        if (range.phase == Phase::Forward) {
            stats.forwardNs += range.durationNs();
            ++stats.forwardCalls;
            forward[range.layer] = true;
        } else if (range.phase == Phase::Backward) {
            stats.backwardNs += range.durationNs();
            ++stats.backwardCalls;
            backward[range.layer] = true;
        }
    }
    for (std::size_t i = 0; i < m_layers.size() && i < stepLayers.size(); ++i) {
        m_layers[i].activationBytes = std::max(m_layers[i].activationBytes, stepLayers[i].activationBytes);
        m_layers[i].selfActivationBytes = std::max(m_layers[i].selfActivationBytes, stepLayers[i].selfActivationBytes);
        m_forwardSteps[i] += forward[i];
        m_backwardSteps[i] += backward[i];
    }
    m_work += span.ranges.size() + m_layers.size();

    // The model, once the step holding the highest peak so far is complete.
    const auto primary = m_live.primary();
    if (primary && step.contains(m_live.peaks()[*primary].timeNs)) {
        try {
            m_model = buildCostModel(span, m_chain);
            m_modelProblem.clear();
        } catch (const Error &error) {
            m_model.reset();
            m_modelProblem = error.what();
        }
        m_work += span.events.size() + span.ranges.size();
    }
}

PeakReport GrowingAnalysis::peakReport() const
{
    PeakReport report;
    if (!m_lanes)
        return report;
    const std::vector<DevicePeak> &peaks = m_live.peaks();
    for (std::size_t d = 0; d < peaks.size() && d < m_usedDevices.size(); ++d) {
        if (!m_usedDevices[d])
            continue;
        DevicePeak peak = peaks[d];
        const Reserved &reserved = m_reserved[d];
        peak.reservedBytes = reserved.peakBytes;
        peak.reservedTimeNs = reserved.peakTimeNs;
        if (peak.eventIndex && reserved.peakBytes) {
            // Every segment change up to and including the peak's time.
            const auto after = std::upper_bound(reserved.changes.begin(), reserved.changes.end(), peak.timeNs,
                                                [](std::int64_t t, const SeriesPoint &point) { return t < point.timeNs; });
            peak.reservedAtPeakBytes = after == reserved.changes.begin() ? 0 : std::prev(after)->bytes;
        }
        report.devices.push_back(peak);
    }
    choosePrimary(report);
    report.liveAtPeak = m_liveAtPeak;
    return report;
}

std::optional<CostModel> GrowingAnalysis::model() const
{
    std::optional<CostModel> model = m_model;
    if (model)
        useMedianStepTime(*model, m_stepTimesNs); // as the model of the whole trace takes it
    return model;
}

std::string GrowingAnalysis::modelProblem() const
{
    if (m_model)
        return {};
    return !m_modelProblem.empty() ? m_modelProblem : std::string("The model is built once the step of the peak is complete.");
}

AnalysedTrace GrowingAnalysis::analysed(TracePtr tracePtr)
{
    AnalysedTrace analysed;
    analysed.trace = std::move(tracePtr);
    const Trace &trace = *analysed.trace;
    analysed.chain = m_chain;
    TraceSummary &summary = analysed.summary;
    summary.eventCount = trace.events.size();
    if (!trace.events.empty()) {
        summary.firstNs = trace.events.timeNs(0);
        summary.lastNs = trace.events.timeNs(trace.events.size() - 1);
    }
    summary.peak = peakReport();
    setStepTime(trace, summary);
    if (summary.peak.primary) {
        const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
        analysed.device = peak.device;
        analysed.peakBytes = peak.allocatedBytes;
        setPeakFields(trace, trace.events, *peak.eventIndex, summary);
    } else if (!trace.lanes.empty()) {
        analysed.device = trace.lanes.front().device;
    }
    summary.layers = m_layers;
    for (std::size_t i = 0; i < summary.layers.size(); ++i) {
        if (m_forwardSteps[i] > 0)
            summary.layers[i].forwardNs /= m_forwardSteps[i];
        if (m_backwardSteps[i] > 0)
            summary.layers[i].backwardNs /= m_backwardSteps[i];
    }
    if (m_stepScan) {
        const std::vector<StepStats> &steps = m_stepScan->stats();
        summary.steps.assign(steps.begin(),
                             steps.begin() + static_cast<std::ptrdiff_t>(std::min(steps.size(), m_live.steps().size())));
    }

    analysed.byCategory.device = analysed.device;
    analysed.byCategory.allocated = m_allocated;
    analysed.byCategory.reserved = m_reservedSeries;
    analysed.byCategory.groups = m_byCategoryGroups.series(trace, GroupBy::Category);
    m_byLayer.device = analysed.device;
    m_byLayer.allocated = m_allocated;
    m_byLayer.reserved = m_reservedSeries;
    m_byLayer.groupBy = GroupBy::Layer;
    m_byLayer.layerDepth = m_layerDepth;
    m_byLayer.groups = m_byLayerGroups.series(trace, GroupBy::Layer);

    analysed.checkpoint = recordedToggles(trace);
    analysed.model = model();
    analysed.modelProblem = modelProblem();
    return analysed;
}

} // namespace peaklens
