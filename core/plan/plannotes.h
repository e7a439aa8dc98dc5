// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a prediction rests on and where checkpointing cannot help, as sentences: the CLI's
// plan and the app's what-if bar show the same ones.

#include "costmodel.h"
#include "predictor.h"

#include <string>
#include <vector>

namespace peaklens {

// The peak in a recompute or in the optimizer (where checkpointing cannot lower it), layer
// times taken for a warm-up and replaced by the chain's median, backward times estimated,
// and per-op policies that save an operator their layer's forward never ran (which keep
// nothing of it: PyTorch matches a policy's operators by their exact overload).
std::vector<std::string> planNotes(const CostModel &model, const CheckpointSchedule &schedule, const Prediction &prediction);

// The layers whose measured time was a warm-up, in one sentence; empty when there are none.
std::string timeOutlierNote(const CostModel &model);

} // namespace peaklens
