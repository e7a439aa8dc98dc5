// SPDX-License-Identifier: Apache-2.0
#include "liveanalysis.h"

#include "spantrace.h"
#include "tracesummary.h"

#include <algorithm>

namespace peaklens {

std::optional<std::size_t> LiveAnalysis::primary() const
{
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < m_peaks.size(); ++i) {
        if (m_peaks[i].allocatedBytes > 0 && (!best || m_peaks[i].allocatedBytes > m_peaks[*best].allocatedBytes))
            best = i;
    }
    return best;
}

void LiveAnalysis::update(const Trace &trace, const TraceGrowth &growth)
{
    std::size_t eventsFrom = growth.eventsFrom;
    if (growth.restart) {
        StepObserver observer = std::move(m_onStep);
        const std::uint64_t work = m_work;
        *this = LiveAnalysis();
        m_onStep = std::move(observer);
        m_work = work;
        eventsFrom = 0;
    }
    // Rows inserted before others move those: what moved is taken in again.
    m_reach.grow(trace, growth.rangesFrom, growth.stepsFrom, growth.kernelsFrom);
    m_work += (trace.ranges.size() - std::min(growth.rangesFrom, trace.ranges.size()))
              + (trace.steps.size() - std::min(growth.stepsFrom, trace.steps.size()))
              + (trace.kernels.size() - std::min(growth.kernelsFrom, trace.kernels.size()));
    if (!m_lanes || trace.lanes.size() != m_laneCount) {
        // Lanes are only ever added: the devices keep their indices.
        m_lanes.emplace(trace);
        m_laneCount = trace.lanes.size();
        for (std::size_t d = m_peaks.size(); d < m_lanes->devices.size(); ++d) {
            m_peaks.push_back(DevicePeak{m_lanes->devices[d]});
            m_current.push_back(0);
        }
    }
    applyNew(trace, std::max(eventsFrom, m_applied));
    completeSteps(trace, growth.complete);
}

void LiveAnalysis::applyNew(const Trace &trace, std::size_t from)
{
    const MemoryEvents &events = trace.events;
    for (std::size_t i = from; i < events.size(); ++i) {
        const std::uint32_t device = m_lanes->deviceOfLane[events.lane(i)];
        std::int64_t &current = m_current[device];
        current += events.deltaBytes(i);
        DevicePeak &peak = m_peaks[device];
        if (current > peak.allocatedBytes) {
            peak.allocatedBytes = current;
            peak.timeNs = events.timeNs(i);
            peak.eventIndex = i;
        }
    }
    m_work += events.size() - from;
    m_applied = events.size();
    if (events.empty())
        return;
    const std::size_t last = events.size() - 1;
    m_currentPhase = events.phase(last);
    m_currentLayer = events.layer(last);
    if (const auto step = trace.stepAt(events.timeNs(last)))
        m_currentStep = trace.steps[*step].number;
    else if (!trace.steps.empty() && events.timeNs(last) >= trace.steps.back().endNs)
        m_currentStep = trace.steps.back().number + 1; // steps are written when they end
}

void LiveAnalysis::completeSteps(const Trace &trace, bool complete)
{
    const std::int64_t newestNs = trace.events.empty() ? INT64_MIN : trace.events.timeNs(trace.events.size() - 1);
    while (m_nextStep < trace.steps.size() && (complete || trace.steps[m_nextStep].endNs < newestNs)) {
        m_steps.push_back(figuresOf(trace, trace.steps[m_nextStep]));
        ++m_nextStep;
    }
}

LiveAnalysis::StepFigures LiveAnalysis::figuresOf(const Trace &trace, const Step &step)
{
    const MemoryEvents &events = trace.events;
    const auto times = events.timesNs();
    const auto begin = static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), step.beginNs) - times.begin());
    const auto end = static_cast<std::size_t>(std::upper_bound(times.begin(), times.end(), step.endNs) - times.begin());
    // Steps may overlap or come back in time (a damaged or odd trace): start the table over.
    if (begin < m_settledAt) {
        m_settled = LiveBlocks();
        m_settledAt = 0;
    }
    for (; m_settledAt < begin; ++m_settledAt)
        m_settled.apply(events, m_settledAt, m_settledAt, m_lanes->deviceOfLane[events.lane(m_settledAt)]);
    const std::vector<LiveBlocks::Block> carried = m_settled.blocksInOrder();
    const auto span =
        spanTrace(trace, carriedThen(carried, step.beginNs, events, begin, end), step.beginNs, step.endNs, &m_reach);
    // The segments reserved before the step are found by a pass over every reserved event.
    m_work += (end - begin) + carried.size() + span->ranges.size() + span->kernels.size() + trace.reserved.size();
    const TraceSummary summary = summarize(*span);
    if (m_onStep)
        m_onStep(*span, carried.size(), step);
    StepFigures figures;
    figures.step = step;
    if (!summary.peak.primary)
        return figures;
    const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
    figures.device = peak.device;
    figures.peakBytes = peak.allocatedBytes;
    figures.peakTimeNs = peak.timeNs;
    figures.peakPhase = summary.peakPhase;
    figures.peakLayer = summary.peakLayer;
    if (summary.peak.liveAtPeak) {
        // Largest first; what no layer allocated (parameters, inputs) names no layer.
        for (const LiveGroup &group : summary.peak.liveAtPeak->byLayer) {
            if (group.key != kNoLayer) {
                figures.topLayer = group.key;
                figures.topLayerBytes = group.bytes;
                break;
            }
        }
    }
    return figures;
}

} // namespace peaklens
