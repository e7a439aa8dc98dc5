// SPDX-License-Identifier: Apache-2.0
#pragma once
// Predicts a step's memory and time for a checkpoint schedule over the chain: the
// measured curve lowered by what each unit frees while its layers' activations would
// have waited for backward, plus the spike of each unit's recompute and what a unit holds
// through its backward. With nothing checkpointed it is the measured step itself.
// docs/planning.md describes the model.

#include "checkpointschedule.h"
#include "costmodel.h"

#include "core/analysis/seriespoint.h"

#include <optional>
#include <vector>

namespace peaklens {

struct Prediction
{
    std::int64_t peakBytes = 0;
    std::int64_t peakTimeNs = 0;
    Phase peakPhase = Phase::Other;
    std::optional<std::size_t> peakInRecomputeOf; // chain index, when a recompute (or the backward after it) makes the peak
    std::int64_t stepTimeNs = 0;
    std::int64_t addedTimeNs = 0;
    // How far addedTimeNs may be off: the spreads of the recomputes it adds up
    // (ChainLayer::recomputeSpreadNs, ChainPart::recomputeSpreadNs).
    std::int64_t addedTimeSpreadNs = 0;
};

// Units over chain indices (model.layers).
Prediction predict(const CostModel &model, const CheckpointSchedule &schedule);
// checkpoint[i] checkpoints model.layers[i] on its own; a shorter vector leaves the rest off.
Prediction predict(const CostModel &model, const std::vector<bool> &checkpoint);

// The predicted curve over the step, recompute spikes included; same clock as the trace.
std::vector<SeriesPoint> predictCurve(const CostModel &model, const CheckpointSchedule &schedule);
std::vector<SeriesPoint> predictCurve(const CostModel &model, const std::vector<bool> &checkpoint);

} // namespace peaklens
