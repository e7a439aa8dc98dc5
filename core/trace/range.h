// SPDX-License-Identifier: Apache-2.0
#pragma once
// A span of time in which a layer ran one phase (forward or backward) in one step,
// or a phase-only span (the optimizer step) when layer is kNoLayer. A range with a
// stage is a named span of the run: a profiler annotation (record_function, a snapshot's
// external_annotations) such as "Optimizer.step#AdamW.step" or "nccl:all_reduce".
// A stage is a range of no layer, in phase Other unless its name says the phase.

#include "layer.h"
#include "phase.h"

#include <cstdint>

namespace peaklens {

inline constexpr std::int64_t kNoStep = -1;
inline constexpr std::uint32_t kNoStage = UINT32_MAX;

struct Range
{
    std::uint32_t layer = kNoLayer;
    Phase phase = Phase::Other;
    std::int64_t step = kNoStep;
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;
    std::uint32_t thread = 0;
    std::uint32_t stage = kNoStage; // index into Trace::stageNames

    std::int64_t durationNs() const { return endNs - beginNs; }
    bool operator==(const Range &) const = default;
};

} // namespace peaklens
