#pragma once
// What to checkpoint, as one value: a rule over the chain of repeated layers ("none",
// "all", "every:K", "sqrt") or named layers ("blocks.1,blocks.4"). The planner, the replay
// engine, the app's what-if bar, the reports and the Python helper's PEAKLENS_CHECKPOINT
// all read this grammar (docs/planning.md); tests/data/checkpoint_strategies.json holds
// the cases both the C++ and the Python side must agree on.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

class CheckpointStrategy
{
public:
    enum class Kind { None, All, Every, SquareRoot, Layers };

    CheckpointStrategy() = default;
    // Throws Error with a sentence naming the text for anything outside the grammar.
    static CheckpointStrategy parse(std::string_view text);
    static CheckpointStrategy every(std::size_t k);
    static CheckpointStrategy layers(std::vector<std::string> paths);
    // The rules the app's what-if bar and the reports offer: none, all, every:2, every:3, sqrt.
    static const std::vector<CheckpointStrategy> &presets();

    Kind kind() const { return m_kind; }
    bool isRule() const { return m_kind != Kind::Layers; }
    const std::vector<std::string> &paths() const { return m_paths; }
    std::string toString() const; // parses back to the same value
    std::string label() const;    // "Every 2nd layer", for menus

    // The toggles over `toggleable` (layer paths, in order): rules choose from `chain`
    // (every K-th of it from the first; sqrt: every ceil(sqrt(N))-th), names from all of
    // `toggleable`. Throws Error naming a path `toggleable` lacks, with the paths to choose from.
    std::vector<bool> resolve(const std::vector<std::string> &chain, const std::vector<std::string> &toggleable) const;

    bool operator==(const CheckpointStrategy &) const = default;

private:
    Kind m_kind = Kind::None;
    std::size_t m_every = 1;
    std::vector<std::string> m_paths;
};

} // namespace peaklens
