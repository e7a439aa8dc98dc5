// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which layers the cost model measures: the chain of repeated blocks (the trace's named
// chain, a ModuleList's blocks, Kineto's Block_N, a loop's calls, or what the user chose),
// its layers' spans in each pass of a step, and the modules inside each chain layer that
// can be checkpointed on their own (its parts).

#include "core/trace/trace.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace peaklens {

struct LaneDevices;

struct ChainSelection
{
    std::optional<std::string> layerPattern; // ECMAScript regex on layer paths; default: defaultChain
    static constexpr std::size_t kMaxLayerPatternLength = 512;
    std::vector<std::uint32_t> layers; // when given: exactly these layers
};

// The model's repeated blocks, the default chain: the chain the trace's metadata names
// (metakey::Chain) where it has one; else, among the containers whose children are
// numbered 0, 1, 2... (a ModuleList or Sequential), the one whose children are all of one
// kind (blocks rather than Linear, GELU, Linear), then the one with the most children,
// then the deepest (the helper's rule); without such a container, the same among the
// groups of siblings Kineto names Block_0, Block_1, ... and the calls of one loop that
// layers from call stacks name model:253[0], model:253[1], ... Its members in index order; empty
// when there is none.
std::vector<std::uint32_t> defaultChain(const Trace &trace);

using Interval = std::pair<std::int64_t, std::int64_t>;

// A layer's forward and backward ranges within a window of the trace, in time order. A
// forward range inside one of the layer's backward ranges is a recompute, not a pass.
struct LayerRanges
{
    std::vector<Interval> forward, backward;
};

std::unordered_map<std::uint32_t, LayerRanges> rangesIn(const Trace &trace, const std::vector<std::uint32_t> &layers,
                                                        std::int64_t begin, std::int64_t end, std::optional<std::int64_t> step);

// A layer's forward and backward in one pass.
struct UnitSpans
{
    std::uint32_t layer = kNoLayer;
    std::int64_t forwardBegin = -1, forwardEnd = -1, backwardBegin = -1, backwardEnd = -1;
};

// The chain in one step: what the cost model measures.
struct ChainUnits
{
    // Per pass (micro-batch), the chain's layers in forward order.
    std::vector<std::vector<UnitSpans>> passes;
    // Per chain layer, its parts in forward order (at most kMostParts), each with its spans per pass.
    std::vector<std::vector<std::vector<UnitSpans>>> parts;
    // Some backward spans were estimated from frees: the trace ranged none for them.
    bool backwardEstimated = false;
    static constexpr std::size_t kMostParts = 64;
};

// The chain `selection` names (default: defaultChain) in the step [begin, end] of the
// events on `device`; throws Error with a sentence when it has none that runs forward and
// backward, or when its layers do not form a chain.
ChainUnits chooseChain(const Trace &trace, const ChainSelection &selection, const LaneDevices &lanes, std::uint32_t device,
                       std::int64_t begin, std::int64_t end, std::optional<std::int64_t> step);

} // namespace peaklens
