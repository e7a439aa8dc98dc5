// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rotor's optimal persistent checkpointing (Beaumont, Eyraud-Dubois, Herrmann, Joly,
// Shilova: "Optimal checkpointing for heterogeneous chains: how to train deep
// architectures with limited memory", 2019), written from the paper's recurrence, as the
// reference the planner is compared with. Rotor models a chain of stages by their times
// and sizes and counts memory in slots; it knows nothing of the measured curve.

#include "core/plan/checkpointschedule.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens::test {

struct RotorStage
{
    std::int64_t forwardNs = 0, backwardNs = 0;
    std::int64_t outputBytes = 0;      // a_i, what the next stage reads
    std::int64_t activationBytes = 0;  // abar_i, all it keeps for its backward (its output included)
    std::int64_t forwardOverhead = 0;  // beyond what it keeps, at the top of its forward
    std::int64_t backwardOverhead = 0; // at the top of its backward
};

struct RotorSolution
{
    std::int64_t addedNs = 0;    // recomputation beyond one forward and one backward per stage
    CheckpointSchedule schedule; // as units: an F_ck run and its recursive solution
};

// The fastest persistent schedule of `stages` within `memory` bytes for activations (the
// rest of the step is not Rotor's to count), memory counted in `slots` slots; none when
// nothing fits.
std::optional<RotorSolution> rotorOptimum(const std::vector<RotorStage> &stages, std::int64_t memory, int slots = 500);

} // namespace peaklens::test
