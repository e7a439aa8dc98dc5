#pragma once
// Per-layer figures: the activation bytes a layer's forward leaves live for the backward
// pass, and its forward and backward time. The base of the checkpointing cost model.

#include "core/trace/trace.h"

#include <cstdint>
#include <vector>

namespace peaklens {

struct LayerStats
{
    std::uint32_t layer = kNoLayer;
    // Bytes allocated during the forward of this layer (inclusive: with its sub-layers)
    // and still live when the step's backward pass begins; the largest over the steps.
    std::int64_t activationBytes = 0;
    std::int64_t selfActivationBytes = 0; // the same without sub-layers
    std::int64_t forwardNs = 0;           // mean time per step of its forward ranges
    std::int64_t backwardNs = 0;
    std::int64_t forwardCalls = 0;        // forward ranges over the whole trace
    std::int64_t backwardCalls = 0;
};

// One entry per layer of the trace, indexed like trace.layers.
std::vector<LayerStats> computeLayerStats(const Trace &trace);

} // namespace peaklens
