#pragma once
// Where checkpoints go, resolved to positions in an ordered list of layers (the chain, or
// the replay engine's stages): units of consecutive layers, each run as one checkpoint
// that keeps only its input. A unit's recompute may checkpoint parts of it again (its
// inner units), so a layer is recomputed once per unit that holds it: Rotor's multi-level
// schedules. One layer per unit and no inner units is per-layer checkpointing.

#include <cstddef>
#include <vector>

namespace peaklens {

struct CheckpointUnit
{
    std::size_t first = 0, last = 0;  // inclusive
    std::vector<CheckpointUnit> inner; // within [first, last], in order, disjoint
    bool operator==(const CheckpointUnit &) const = default;
};

// Top-level units in order, disjoint.
using CheckpointSchedule = std::vector<CheckpointUnit>;

// One single-layer unit per toggled position.
CheckpointSchedule singleLayerUnits(const std::vector<bool> &toggles);
// Per position of `count`: whether a top-level unit holds it.
std::vector<bool> toggledPositions(const CheckpointSchedule &schedule, std::size_t count);
// Per position of `count`: how many units (of any level) hold it, the times it is recomputed.
std::vector<std::size_t> recomputeCounts(const CheckpointSchedule &schedule, std::size_t count);
// True when every unit is one layer without inner units.
bool isPerLayer(const CheckpointSchedule &schedule);

} // namespace peaklens
