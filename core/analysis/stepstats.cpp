// SPDX-License-Identifier: Apache-2.0
#include "stepstats.h"

#include "median.h"

namespace peaklens {

namespace {
// A step begins with what is allocated then, its peak so far.
void start(StepStats &stats, std::int64_t allocated)
{
    stats.startBytes = stats.peakAllocatedBytes = allocated;
    stats.peakTimeNs = stats.beginNs;
}
} // namespace

std::optional<std::int64_t> medianStepTimeNs(const Trace &trace)
{
    if (trace.steps.empty())
        return std::nullopt;
    std::vector<std::int64_t> times;
    times.reserve(trace.steps.size());
    for (const Step &step : trace.steps)
        times.push_back(step.durationNs());
    return median(std::move(times));
}

std::vector<StepStats> computeStepStats(const Trace &trace, Device device)
{
    StepScan scan(trace, device);
    scan.add(trace.events);
    return scan.finish();
}

StepScan::StepScan(const Trace &trace, Device device)
    : m_lanes(trace)
    , m_device(m_lanes.indexOf(device))
{
    m_stats.reserve(trace.steps.size());
    for (const Step &step : trace.steps)
        m_stats.push_back(StepStats{step.number, step.beginNs, step.endNs});
}

void StepScan::add(const MemoryEvents &events, std::size_t begin, std::size_t end)
{
    if (!m_device)
        return;
    for (std::size_t i = begin; i < end; ++i) {
        if (m_lanes.deviceOfLane[events.lane(i)] != *m_device)
            continue;
        const std::int64_t t = events.timeNs(i);
        for (; m_step < m_stats.size() && t >= m_stats[m_step].endNs; ++m_step, m_started = false) {
            if (!m_started)
                start(m_stats[m_step], m_current);
        }
        if (m_step == m_stats.size())
            return;
        if (!m_started && t >= m_stats[m_step].beginNs) {
            start(m_stats[m_step], m_current);
            m_started = true;
        }
        m_current += events.deltaBytes(i);
        if (!m_started)
            continue;
        StepStats &s = m_stats[m_step];
        if (events.deltaBytes(i) > 0) {
            s.allocatedBytes += events.deltaBytes(i);
            ++s.allocations;
        }
        if (m_current > s.peakAllocatedBytes) {
            s.peakAllocatedBytes = m_current;
            s.peakTimeNs = t;
            s.peakPhase = events.phase(i);
        }
    }
}

std::vector<StepStats> StepScan::finish() const
{
    std::vector<StepStats> stats = m_stats;
    // Steps not yet begun when the events ended start with what was then allocated.
    bool started = m_started;
    for (std::size_t step = m_step; step < stats.size(); ++step, started = false) {
        if (!started)
            start(stats[step], m_current);
    }
    return stats;
}

} // namespace peaklens
