// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cost model's one measuring walk: over a step's events on one device, in time order,
// it measures every unit of the chain (its layers and the parts inside them) in every
// pass at the boundaries of their forward and backward, records the step's curve, and
// cuts each chain layer's backward at its parts' boundaries.

#include "chainselection.h"
#include "costmodel.h"

#include <vector>

namespace peaklens {

// What the walk measured of one unit (a chain layer or a part) in one pass. A unit's
// forward keeps blocks A (`retained`), the newest large one its output o; of A, `alive`
// is still live when its backward begins.
struct UnitMeasure
{
    std::int64_t retained = 0, output = 0, alive = 0;
    bool outputLive = false; // o still live when its backward begins
    // What checkpointing it frees until its backward begins: A's blocks alive then, but o
    // (the next unit keeps it either way); for a part, less its input where the measured
    // step had freed that by then (a checkpoint keeps it).
    std::int64_t saving = 0;
    std::int64_t regenerated = 0; // A - alive: made again by a recompute
    std::int64_t kept = 0;        // of A, still live when the next chain layer's forward ends (chain layers only)
    bool outputKept = false;      // o among them: the next chain layer kept its input for backward
    std::int64_t forwardRise = 0; // the most its forward's own blocks held at once
    std::int64_t levelAtBackward = 0;
    std::int64_t backwardBeginNs = 0;
    // Checkpointed, the most its backward holds beyond the measured one, and the highest
    // measured level plus that, with its time.
    std::int64_t mostHeld = 0, backwardPeak = INT64_MIN, backwardPeakTimeNs = 0;
    // The allocating events of A's blocks alive when its backward begins, in allocation
    // order (what its backward was given to keep), and its output's (SIZE_MAX: none).
    std::vector<std::size_t> keptEvents;
    std::size_t outputEvent = SIZE_MAX;
    std::size_t forwardBeginEvent = 0, forwardEndEvent = 0; // its forward's events [begin, end)
    std::int64_t forwardBeginNs = 0, forwardEndNs = 0;
    std::size_t forwardOutputEvent = SIZE_MAX; // its output's, live then or not
};

struct ChainMeasures
{
    std::vector<std::vector<UnitMeasure>> layers;             // [pass][chain layer]
    std::vector<std::vector<std::vector<UnitMeasure>>> parts; // [chain layer][part][pass]
};

// Walks the events on `device` in [begin, end) (the level before begin carried in), fills
// model.curve and each model.layers[k].backwardPieces (model.layers sized to the chain,
// with its parts), and returns what it measured of each unit.
ChainMeasures walkChain(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin, std::int64_t end,
                        const ChainUnits &units, CostModel &model);

} // namespace peaklens
