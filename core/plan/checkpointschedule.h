// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where checkpoints go, resolved to positions in an ordered list of layers (the chain, or
// the replay engine's stages): units of consecutive layers, each run as one checkpoint
// that keeps only its input. A unit's recompute may checkpoint parts of it again (its
// inner units), so a layer is recomputed once per unit that holds it: Rotor's multi-level
// schedules. One layer per unit and no inner units is per-layer checkpointing. A unit
// may also be one part of a layer (a module inside it, "blocks.3.attn"), checkpointed
// while the rest of the layer runs plainly; or one layer checkpointed with a per-op
// policy, whose listed operators' outputs are kept through the forward instead of
// recomputed: selective checkpointing. A unit may also be no checkpoint at all: one layer
// run plainly that keeps what it saves for backward elsewhere (in bfloat16, in host memory).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

inline constexpr std::size_t kWholeLayer = SIZE_MAX;

// Where a layer keeps what its forward saves for backward.
enum class KeptForm : std::uint8_t {
    AsMade,   // as the forward made it, in device memory
    Bfloat16, // packed to bfloat16 (floating point only), unpacked as its backward uses it
    Host,     // copied to host memory, brought back as its backward uses it (offload)
};

// "bf16", "offload" (a policy as the grammar writes it, "blocks.3[offload]"); "" for AsMade.
std::string_view keptFormName(KeptForm form);
std::optional<KeptForm> keptFormNamed(std::string_view name);

struct CheckpointUnit
{
    std::size_t first = 0, last = 0;   // inclusive
    std::vector<CheckpointUnit> inner; // within [first, last], in order, disjoint
    // kWholeLayer: the layers first..last. Else the index of one part of layer first
    // (== last; no inner units): that module alone is checkpointed.
    std::size_t part = kWholeLayer;
    // A per-op policy (one whole layer, top level only): the operators whose outputs its
    // forward keeps, as PyTorch names their overloads ("aten.addmm.default"), sorted. Empty:
    // everything it made is recomputed.
    std::vector<std::string> saved;
    // Not AsMade: not a checkpoint (one whole layer, top level only), the layer runs plainly
    // and keeps what its forward saves for backward in that form.
    KeptForm kept = KeptForm::AsMade;
    bool isPart() const { return part != kWholeLayer; }
    bool runsPlainly() const { return kept != KeptForm::AsMade; }
    bool operator==(const CheckpointUnit &) const = default;
};

// Top-level units in order (by first layer, then part), disjoint: no part of a layer a
// whole unit holds, no part inside another.
using CheckpointSchedule = std::vector<CheckpointUnit>;

// One single-layer unit per toggled position.
CheckpointSchedule singleLayerUnits(const std::vector<bool> &toggles);
// Per position of `count`: whether a top-level unit holds it whole (a checkpoint: not a
// layer run plainly).
std::vector<bool> toggledPositions(const CheckpointSchedule &schedule, std::size_t count);
// Per position of `count`: how many units (of any level) hold it whole, the times it is recomputed.
std::vector<std::size_t> recomputeCounts(const CheckpointSchedule &schedule, std::size_t count);
// True when every unit is one whole layer without inner units or a per-op policy.
bool isPerLayer(const CheckpointSchedule &schedule);
// Per position of `count`: a bit per part the schedule checkpoints (parts 0..63).
std::vector<std::uint64_t> partMasks(const CheckpointSchedule &schedule, std::size_t count);

} // namespace peaklens
