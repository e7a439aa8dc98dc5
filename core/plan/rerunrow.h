// SPDX-License-Identifier: Apache-2.0
#pragma once
// One rerun against what the baseline's cost model predicted for its toggles: the row the
// app's Runs table shows, a report compares and `peaklens-cli rerun` prints, all built by
// rerunRow.

#include "checkpointstrategy.h"
#include "costmodel.h"
#include "predictor.h"
#include "replayresult.h"
#include "steptimecomparison.h"

#include <optional>
#include <string>

namespace peaklens {

struct RerunRow
{
    CheckpointStrategy strategy;   // the units rerun, as the strategy grammar writes them
    CheckpointSchedule schedule;   // the same on the model's chain
    Prediction predicted;          // by the baseline's model, for those units
    Prediction modelBaseline;      // the model's own step, without toggles: what predictions are relative to
    std::int64_t stepSpreadNs = 0; // how far predicted.stepTimeNs may be off: the steps' spread and the recomputes'
    ReplayResult measured;         // the run's steps, and the baseline's measured beside them
    std::string outcome;           // empty when measured; else out of memory, cancelled or why it failed

    // The prediction's error against the measured peak, in percent of it; none unmeasured.
    std::optional<double> peakErrorPercent() const;
    // The predicted change of step time and the one measured against the baseline run
    // beside it.
    StepChange stepChange() const;
};

// Throws Error when the strategy names units the model does not have. An out-of-memory
// failure in `measured` becomes the outcome.
RerunRow rerunRow(const CostModel &model, const CheckpointStrategy &strategy, ReplayResult measured = {});

} // namespace peaklens
