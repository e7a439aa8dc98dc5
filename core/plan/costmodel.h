#pragma once
// The checkpointing cost model of one training step, measured from a trace: the chain of
// checkpointable layers with what each saves for backward, and the measured memory curve
// cut into segments by which layers' saved activations are alive. docs/planning.md
// describes the model and what it ignores.

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct ChainLayer
{
    std::uint32_t layer = kNoLayer;
    std::string path;
    std::int64_t savedBytes = 0;     // s_i: allocated in its forward, still live when its backward begins
    std::int64_t outputBytes = 0;    // its output, which the next layer keeps either way
    std::int64_t inputBytes = 0;     // in_i: the previous layer's output, what a checkpoint keeps
    std::int64_t forwardRiseBytes = 0; // w_i: how far its forward lifts memory, replayed by a recompute
    std::int64_t forwardNs = 0;      // f_i
    std::int64_t backwardNs = 0;     // b_i
    std::int64_t levelAtBackwardBytes = 0; // measured allocated bytes as its backward begins
    std::int64_t backwardBeginNs = 0;

    // What checkpointing the layer frees between its forward and its backward.
    std::int64_t savingBytes() const { return savedBytes - outputBytes; }
};

struct CurvePoint
{
    std::int64_t timeNs = 0;
    std::int64_t bytes = 0;      // measured allocated bytes from this time on
    std::uint32_t segment = 0;   // how many chain layers' saved activations are alive
    Phase phase = Phase::Other;
};

struct CostModel
{
    Device device;
    std::optional<std::int64_t> step;
    std::int64_t stepBeginNs = 0;
    std::int64_t stepTimeNs = 0;
    std::vector<ChainLayer> layers;      // in forward order
    std::vector<CurvePoint> curve;       // the measured step
    // Per segment p = 0..N: the highest measured point with exactly layers 0..p-1 alive.
    std::vector<std::int64_t> segmentPeakBytes;
    std::vector<std::size_t> segmentPeakPoint; // index into curve
    std::int64_t measuredPeakBytes = 0;
    // The trace ranged no backward for some chain layers (imported without PeakLens's
    // helper): their backward spans were estimated from when the blocks their forward
    // left for the backward were freed.
    bool backwardEstimated = false;
};

struct ChainSelection
{
    std::optional<std::string> layerPattern; // ECMAScript regex on layer paths; default: defaultChain
    std::vector<std::uint32_t> layers;       // when given: exactly these layers
};

// The model's repeated blocks, the default chain: among the containers whose children are
// numbered 0, 1, 2... (a ModuleList or Sequential), the one whose children are all of one
// kind (blocks rather than Linear, GELU, Linear), then the one with the most children,
// then the deepest (the helper's rule); without such a container, the same among the
// groups of siblings Kineto names Block_0, Block_1, ... Its members in index order; empty
// when there is none.
std::vector<std::uint32_t> defaultChain(const Trace &trace);

// Throws Error with a sentence when the trace has no usable chain.
CostModel buildCostModel(const Trace &trace, const ChainSelection &selection = {});

} // namespace peaklens
