// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-layer figures: the activation bytes a layer's forward leaves live for the backward
// pass, and its forward and backward time. The base of the checkpointing cost model.

#include "core/trace/trace.h"
#include "lanedevices.h"
#include "liveblocks.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

struct LayerStats
{
    std::uint32_t layer = kNoLayer;
    // Bytes allocated during the forward of this layer (inclusive: with its sub-layers)
    // and still live when the step's backward pass begins, less what is still live when
    // the step ends (a workspace or cache the process keeps); the largest over the steps.
    std::int64_t activationBytes = 0;
    std::int64_t selfActivationBytes = 0; // the same without sub-layers
    std::int64_t forwardNs = 0;           // mean time per step of its forward ranges
    std::int64_t backwardNs = 0;
    std::int64_t forwardCalls = 0; // forward ranges over the whole trace
    std::int64_t backwardCalls = 0;
};

// One entry per layer of the trace, indexed like trace.layers.
std::vector<LayerStats> computeLayerStats(const Trace &trace);

// The same fed the trace's events in time order a chunk at a time (as PeakScan is).
class LayerScan
{
public:
    explicit LayerScan(const Trace &trace);
    void add(const MemoryEvents &events, std::size_t first) { add(events, first, 0, events.size()); }
    // Only events [begin, end) of the chunk.
    void add(const MemoryEvents &events, std::size_t first, std::size_t begin, std::size_t end);
    std::vector<LayerStats> finish();
    // Every device's live blocks after the events added so far.
    const LiveBlocks &live() const { return m_live; }

private:
    // When the backward pass of a step begins: the moment its forward activations are counted.
    struct BackwardStart
    {
        std::int64_t step;
        std::int64_t timeNs;
        std::int64_t stepBeginNs; // allocations before this belong to an earlier step
        std::int64_t stepEndNs;   // INT64_MAX when the trace has no such step
    };
    // A forward block live at the last backward start, until its step ends.
    struct Candidate
    {
        std::uint32_t event;
        std::uint32_t layer;
        std::int64_t bytes;
    };
    static std::vector<BackwardStart> backwardStarts(const Trace &trace);
    void count(const BackwardStart &start);
    void settle(bool stepEnded);

    const Trace &m_trace;
    LaneDevices m_lanes;
    std::vector<LayerStats> m_stats;
    std::vector<BackwardStart> m_starts;
    std::size_t m_nextStart = 0;
    LiveBlocks m_live;
    std::vector<std::int64_t> m_selfBytes;
    std::optional<BackwardStart> m_counted; // counted, not yet settled
    std::vector<Candidate> m_candidates;
};

} // namespace peaklens
