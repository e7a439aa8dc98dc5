// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-step figures on one device: how long the step took, where its memory peaked, and
// how much it allocated.

#include "core/trace/trace.h"
#include "lanedevices.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

struct StepStats
{
    std::int64_t number = 0;
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;
    std::int64_t startBytes = 0;         // allocated when the step began
    std::int64_t peakAllocatedBytes = 0; // highest allocated bytes inside the step
    std::int64_t peakTimeNs = 0;
    Phase peakPhase = Phase::Other;
    std::int64_t allocatedBytes = 0; // sum of the step's allocations
    std::int64_t allocations = 0;

    std::int64_t durationNs() const { return endNs - beginNs; }
};

// The step time every view shows: the median of the trace's step durations (a warm-up step
// ten times the others leaves it alone); none for a trace without steps.
std::optional<std::int64_t> medianStepTimeNs(const Trace &trace);

// One entry per step of the trace, in time order, for the events on `device`.
std::vector<StepStats> computeStepStats(const Trace &trace, Device device);

// The same fed the trace's events in time order a chunk at a time (as PeakScan is).
class StepScan
{
public:
    StepScan(const Trace &trace, Device device);
    void add(const MemoryEvents &events) { add(events, 0, events.size()); }
    // Only events [begin, end).
    void add(const MemoryEvents &events, std::size_t begin, std::size_t end);
    // A step of a trace still being written, after the others; its figures are final once
    // the events up to its end have been added.
    void addStep(const Step &step) { m_stats.push_back(StepStats{step.number, step.beginNs, step.endNs}); }
    std::vector<StepStats> finish() const;
    const std::vector<StepStats> &stats() const { return m_stats; }

private:
    LaneDevices m_lanes;
    std::optional<std::uint32_t> m_device;
    std::vector<StepStats> m_stats;
    std::int64_t m_current = 0;
    // Steps are sorted and do not overlap: m_step is the first one not yet over,
    // m_started whether its begin has been passed.
    std::size_t m_step = 0;
    bool m_started = false;
};

} // namespace peaklens
