// SPDX-License-Identifier: Apache-2.0
#pragma once
// The figures of a run while it is recorded, kept up to date as a follower adds to its
// trace (TraceFollower): every device's allocated bytes now and at their peak so far,
// and, for each step once its events are all in, where its memory peaked and which layer
// held most there. An update costs what its new events cost, plus, for a step that
// completes, what that step's events and the blocks live at its start cost: never what
// the whole trace costs, however long the run.

#include "core/trace/trace.h"
#include "core/trace/tracegrowth.h"
#include "lanedevices.h"
#include "liveblocks.h"
#include "peakfinder.h"
#include "spantrace.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace peaklens {

class LiveAnalysis
{
public:
    struct StepFigures
    {
        Step step;
        Device device;              // where the step's memory peaked
        std::int64_t peakBytes = 0; // allocated at the step's peak
        std::int64_t peakTimeNs = 0;
        Phase peakPhase = Phase::Other;
        std::uint32_t peakLayer = kNoLayer; // the layer running at the peak
        std::uint32_t topLayer = kNoLayer;  // the layer whose blocks held most at the peak (none: no layer held any)
        std::int64_t topLayerBytes = 0;
    };

    // Takes the trace's new events (all of them again when it must restart) and the steps
    // whose events are all in: those that end before the newest event, every one once it
    // is complete.
    void update(const Trace &trace, const TraceGrowth &growth);

    // Called as each step completes with the step as a trace of its own (spanTrace: the
    // blocks live as it began, `carried` events at its start, then its events), for
    // analyses that are built a step at a time.
    using StepObserver = std::function<void(const Trace &span, std::size_t carried, const Step &step)>;
    void setStepObserver(StepObserver observer) { m_onStep = std::move(observer); }

    const std::vector<DevicePeak> &peaks() const { return m_peaks; } // one per device with events
    std::optional<std::size_t> primary() const;                      // the highest peak
    std::int64_t currentBytes(std::size_t device) const { return m_current[device]; }
    const std::vector<StepFigures> &steps() const { return m_steps; }
    // The step the newest event belongs to, or the one after the last that ended; its phase.
    std::optional<std::int64_t> currentStep() const { return m_currentStep; }
    Phase currentPhase() const { return m_currentPhase; }
    std::uint32_t currentLayer() const { return m_currentLayer; }

    // The events, live blocks and table rows the updates have touched so far: what an
    // update costs.
    std::uint64_t work() const { return m_work; }

private:
    void applyNew(const Trace &trace, std::size_t from);
    void completeSteps(const Trace &trace, bool complete);
    StepFigures figuresOf(const Trace &trace, const Step &step);

    StepObserver m_onStep;
    SpanReach m_reach;
    std::optional<LaneDevices> m_lanes;
    std::size_t m_laneCount = 0;
    std::vector<DevicePeak> m_peaks;
    std::vector<std::int64_t> m_current;
    std::size_t m_applied = 0; // events taken so far
    LiveBlocks m_settled;      // the blocks live before event m_settledAt
    std::size_t m_settledAt = 0;
    std::size_t m_nextStep = 0; // the first step not yet complete
    std::vector<StepFigures> m_steps;
    std::optional<std::int64_t> m_currentStep;
    Phase m_currentPhase = Phase::Other;
    std::uint32_t m_currentLayer = kNoLayer;
    std::uint64_t m_work = 0;
};

} // namespace peaklens
