// SPDX-License-Identifier: Apache-2.0
#include "phase.h"

#include "enumnames.h"

namespace peaklens {

namespace {
constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {"other", "forward", "backward", "optimizer"};
constexpr std::array<std::string_view, kPhaseCount> kPhasePrefixes = {"", "fwd", "bwd", "opt"};
} // namespace

std::string_view phaseName(Phase phase)
{
    return kPhaseNames.at(static_cast<std::size_t>(phase));
}

std::string_view phasePrefix(Phase phase)
{
    return kPhasePrefixes.at(static_cast<std::size_t>(phase));
}

std::optional<Phase> parsePhase(std::string_view nameOrPrefix)
{
    if (auto phase = enumFromName<Phase>(kPhaseNames, nameOrPrefix))
        return phase;
    if (nameOrPrefix.empty())
        return std::nullopt; // Other has no prefix
    return enumFromName<Phase>(kPhasePrefixes, nameOrPrefix);
}

} // namespace peaklens
