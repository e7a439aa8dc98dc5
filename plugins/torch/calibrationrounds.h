// SPDX-License-Identifier: Apache-2.0
#pragma once
// What checkpointing each calibrated stage added in each round of peaklens-replay's
// calibration (replayrunner.h), whether the rounds agree, and the cost and spread the
// planner reads from them ("checkpoint.costs", "checkpoint.cost_spreads").

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens::replay {

// Per layer of `layers`: its forward and backward time in each step of `checkpointed` less
// in the same round's step of `plain`. Empty for a layer the two do not time alike.
std::vector<std::vector<std::int64_t>> addedPerRound(const std::vector<Range> &plain, const std::vector<Range> &checkpointed,
                                                     const std::vector<std::uint32_t> &layers);

// Whether a round's total over the layers strays from the rounds' median by more than a quarter.
bool roundsDisagree(const std::vector<std::vector<std::int64_t>> &added);

struct CalibratedCost
{
    std::int64_t ns = 0;       // the rounds' median, at least 0
    std::int64_t spreadNs = 0; // the farthest round from it
};
std::optional<CalibratedCost> calibratedCost(const std::vector<std::int64_t> &rounds);

} // namespace peaklens::replay
