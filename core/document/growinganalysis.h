// SPDX-License-Identifier: Apache-2.0
#pragma once
// The analyses the app shows of a run while it is recorded — its timeline by category and
// by layer, the peaks and what is live at the highest, the layer and step tables, the cost
// model — kept up to date as a follower adds to its trace. An update costs what its new
// events and rows cost, plus, for a step that completes, what that step's events and the
// blocks live at its start cost; a copy of what it holds (analysed()) shares the series
// instead of copying them. So neither grows with the length of the run.
//
// The layer table, the step table and the model are built a step at a time, from the
// steps whose events are all in: a layer's times are those of the ranges of completed
// steps, the model is the step of the peak's, with the median step time of the steps so
// far. An analysis of the finished file (analyseTrace) gives the figures of every range,
// and the model's per-layer times as medians over the steps.

#include "core/analysis/liveanalysis.h"
#include "core/analysis/stepstats.h"
#include "core/document/analysedtrace.h"

#include <optional>

namespace peaklens {

class GrowingAnalysis
{
public:
    explicit GrowingAnalysis(ChainSelection chain = {});

    void update(const Trace &trace, const TraceGrowth &growth);

    // The running figures: peaks so far, each completed step's, the step running now.
    const LiveAnalysis &live() const { return m_live; }

    // What has been analysed so far, as analyseTrace gives it, over `trace` (the trace the
    // updates read, or a copy of it). The views' series share the points built so far.
    AnalysedTrace analysed(TracePtr trace);
    // The cost model as analysed() gives it: the step of the highest peak so far, with the
    // median step time of the steps so far; or none, and modelProblem() says why.
    std::optional<CostModel> model() const;
    std::string modelProblem() const;
    // The timeline grouped by layer, one band per repeated block (blockDepth), as
    // analysed() left it.
    const TimelineSeries &byLayer() const { return m_byLayer; }

    // The events, blocks and rows the updates have touched so far: what an update costs.
    std::uint64_t work() const { return m_live.work() + m_work; }

private:
    void followPrimaryDevice(const Trace &trace);
    void takeEvents(const Trace &trace, std::size_t from);
    void takeReserved(const Trace &trace, std::size_t from);
    void takeLayers(const Trace &trace);
    void onStep(const Trace &span, std::size_t carried, const Step &step);
    PeakReport peakReport() const;
    std::uint32_t bandOf(std::uint32_t layer) const { return layer < m_bandOfLayer.size() ? m_bandOfLayer[layer] : kNoLayer; }

    ChainSelection m_chain;
    LiveAnalysis m_live;
    std::uint64_t m_work = 0;
    const Trace *m_trace = nullptr; // the trace being updated, while an update runs

    std::optional<LaneDevices> m_lanes;
    std::size_t m_laneCount = 0;
    std::vector<bool> m_usedDevices;
    std::size_t m_eventsTaken = 0;
    std::size_t m_reservedTaken = 0;
    // Reserved bytes on each device: now, at their highest, and every change (segments are few).
    struct Reserved
    {
        std::int64_t bytes = 0;
        std::optional<std::int64_t> peakBytes, peakTimeNs;
        std::vector<SeriesPoint> changes;
    };
    std::vector<Reserved> m_reserved;

    // The timeline's device (the primary peak's), and what is built on it.
    std::optional<std::uint32_t> m_device;
    SharedPoints m_allocated, m_reservedSeries;
    std::int64_t m_allocatedBytes = 0;
    TimelineGrouping m_byCategoryGroups, m_byLayerGroups;
    std::size_t m_layerCount = 0;
    int m_layerDepth = 0;
    std::vector<std::uint32_t> m_bandOfLayer;
    TimelineSeries m_byLayer;

    // Every device's live blocks, and what was live at the primary peak when it was reached.
    LiveBlocks m_blocks;
    std::optional<LiveSet> m_liveAtPeak;
    std::optional<std::size_t> m_liveAtPeakEvent;

    // Built a step at a time.
    std::optional<StepScan> m_stepScan;
    std::size_t m_stepEventsTaken = 0;
    std::vector<LayerStats> m_layers;
    std::vector<std::int64_t> m_forwardSteps, m_backwardSteps; // steps with ranges of each layer
    std::vector<std::int64_t> m_stepTimesNs;
    std::optional<CostModel> m_model;
    std::string m_modelProblem;
};

} // namespace peaklens
