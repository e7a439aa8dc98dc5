// SPDX-License-Identifier: Apache-2.0
#pragma once
// The part of a training step an event or range belongs to.

#include <cstdint>
#include <optional>
#include <string_view>

namespace peaklens {

enum class Phase : std::uint8_t {
    Other = 0,
    Forward = 1,
    Backward = 2,
    Optimizer = 3,
};
inline constexpr int kPhaseCount = 4;

std::string_view phaseName(Phase phase);
// The short prefix used in range names: "fwd", "bwd", "opt" (empty for Other).
std::string_view phasePrefix(Phase phase);
std::optional<Phase> parsePhase(std::string_view nameOrPrefix);

} // namespace peaklens
