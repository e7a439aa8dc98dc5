// SPDX-License-Identifier: Apache-2.0
#pragma once
// What to checkpoint, as one value: a rule over the chain of repeated layers ("none",
// "all", "every:K", "segments:K", "sqrt"), or a list of units: a layer ("blocks.1"), a
// segment run as one checkpoint ("blocks.0..blocks.3"), and a segment whose recompute
// checkpoints parts of it again ("blocks.0..blocks.7(blocks.0..blocks.3)"), and a module
// inside a layer, checkpointed on its own ("blocks.3.attn"), and a layer checkpointed with
// a per-op policy that keeps the outputs of the operators it lists
// ("blocks.3[save:aten.addmm.default+aten.mm.default]"), and a layer run plainly that
// keeps what it saves for backward in bfloat16 ("blocks.3[bf16]") or in host memory
// ("blocks.3[offload]"). The planner,
// the replay engine, the app's what-if bar, the reports and the Python helper's
// PEAKLENS_CHECKPOINT all read this grammar (docs/planning.md);
// tests/data/checkpoint_strategies.json holds the cases the C++ and the Python side must
// agree on.

#include "checkpointschedule.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

// Per layer: the paths of the modules inside it that can be checkpointed on their own
// (its parts), in the order they run.
using LayerParts = std::vector<std::vector<std::string>>;

class CheckpointStrategy
{
public:
    enum class Kind { None, All, Every, Segments, SquareRoot, Units };

    // A listed unit: one layer (last empty) or the layers first..last, with inner units;
    // `saved` and `kept`, a single layer's policy (CheckpointUnit's).
    struct Item
    {
        std::string first, last;
        std::vector<Item> inner;
        std::vector<std::string> saved;
        KeptForm kept = KeptForm::AsMade;
        bool operator==(const Item &) const = default;
    };

    CheckpointStrategy() = default;
    // Throws Error with a sentence naming the text for anything outside the grammar.
    static CheckpointStrategy parse(std::string_view text);
    static CheckpointStrategy every(std::size_t k);
    static CheckpointStrategy layers(const std::vector<std::string> &paths);
    static CheckpointStrategy units(std::vector<Item> items);
    // What unitTexts() wrote, read back (none for no units); throws as parse does.
    static CheckpointStrategy ofUnitTexts(const std::vector<std::string> &units);
    // The rules the app's what-if bar and the reports offer: none, all, every:2, every:3, sqrt.
    static const std::vector<CheckpointStrategy> &presets();

    Kind kind() const { return m_kind; }
    bool isRule() const { return m_kind != Kind::Units; }
    std::string toString() const; // parses back to the same value
    // Its top-level units written out one by one ("blocks.0..blocks.3(blocks.0)", "blocks.5"),
    // or the rule: for lists of what a run checkpointed.
    std::vector<std::string> unitTexts() const;
    std::string label() const; // "Every 2nd layer", for menus

    // The units over `toggleable` (layer paths, in the order they run). Rules choose from
    // `chain`: every:K every K-th layer from the first; segments:K runs of K layers, each
    // one checkpoint but the last (which would be recomputed at once), as PyTorch's
    // checkpoint_sequential does; sqrt segments of ceil(sqrt(N)) layers. Throws Error
    // naming a path `toggleable` lacks, a segment whose layers do not run one after
    // another, or units that overlap. A name among parts[i] is that part of toggleable[i].
    CheckpointSchedule schedule(const std::vector<std::string> &chain, const std::vector<std::string> &toggleable,
                                const LayerParts &parts = {}) const;
    // Per layer of `toggleable`: whether a top-level unit holds it.
    std::vector<bool> resolve(const std::vector<std::string> &chain, const std::vector<std::string> &toggleable) const;
    // The units of `schedule` over `paths` (and their `parts`), written out.
    static CheckpointStrategy of(const CheckpointSchedule &schedule, const std::vector<std::string> &paths,
                                 const LayerParts &parts = {});

    bool operator==(const CheckpointStrategy &) const = default;

private:
    Kind m_kind = Kind::None;
    std::size_t m_every = 1;
    std::vector<Item> m_items;
};

// An operator as a per-op policy names it, PyTorch's overload name "aten.addmm.default",
// from that name itself or from the name a trace records ("aten::addmm" for the default
// overload, "aten::mul.Tensor", and "aten::mul_Tensor" as a snapshot's dispatcher frames
// write it). Empty for anything else, a name without its overload
// ("aten.mm", which matches no operator in a PyTorch policy) included.
std::string operatorOverload(std::string_view op);
// Whether a per-op policy keeps an operator's outputs (`op` as operatorOverload writes it):
// not an in-place one ("aten.div_.Scalar": what it returns is its argument, another's
// output), nor a factory ("aten.empty_like.default": the operators after it fill its block
// in place, which a kept block would not repeat in the recompute).
bool keptByPolicies(std::string_view op);

} // namespace peaklens
