#pragma once
// What buildCostModel measures with, shared inside core/plan: a layer's ranges within a
// window of the trace, the spans of a chain layer in one pass, the rule that picks a
// layer's output among the blocks its forward keeps, and the walk that measures the parts
// (modules inside) of the chain's layers.

#include "costmodel.h"

#include "core/analysis/lanedevices.h"

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace peaklens {

using Interval = std::pair<std::int64_t, std::int64_t>;

// A layer's forward and backward ranges within a window of the trace, in time order. A
// forward range inside one of the layer's backward ranges is a recompute, not a pass.
struct LayerRanges
{
    std::vector<Interval> forward, backward;
};

std::unordered_map<std::uint32_t, LayerRanges> rangesIn(const Trace &trace, const std::vector<std::uint32_t> &layers,
                                                        std::int64_t begin, std::int64_t end,
                                                        std::optional<std::int64_t> step);

// A chain layer in one pass.
struct ChainSpans
{
    std::uint32_t layer;
    std::int64_t forwardBegin = -1, forwardEnd = -1, backwardBegin = -1, backwardEnd = -1;
};

// Of the blocks (address, allocating event) a forward kept, in allocation order: the
// event of its output, the newest not smaller than 1/64 of the largest (BatchNorm's and
// LayerNorm's saved statistics are allocated after it). SIZE_MAX when there are none.
std::size_t outputEvent(const MemoryEvents &events, const std::vector<std::pair<std::uint64_t, std::size_t>> &blocks);

// Fills model.layers[k].parts and backwardPieces: the modules inside each chain layer
// that run forward and backward once per pass within the layer's own spans (passes[m][k]),
// measured over the step's events on `device` in [begin, end).
void measureParts(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin, std::int64_t end,
                  std::optional<std::int64_t> step, const std::vector<std::vector<ChainSpans>> &passes, CostModel &model);

} // namespace peaklens
