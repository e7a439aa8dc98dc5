#include "phase.h"

#include <array>

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
    for (std::size_t i = 0; i < kPhaseNames.size(); ++i) {
        if (kPhaseNames[i] == nameOrPrefix || (i > 0 && kPhasePrefixes[i] == nameOrPrefix))
            return static_cast<Phase>(i);
    }
    return std::nullopt;
}

} // namespace peaklens
