// SPDX-License-Identifier: Apache-2.0
#pragma once
// A plan as Python code (`plan --emit python`): a module whose apply(model) checkpoints
// the plan's units, for a training script to keep with its model. A plan of modules alone
// needs only PyTorch; segments run several layers as one checkpoint by rerouting their
// container's iteration, which the PeakLens helper does, so such a plan calls it.

#include "core/trace/trace.h"
#include "costmodel.h"
#include "planner.h"

#include <string>
#include <string_view>

namespace peaklens {

// `description`: lines on what was planned and predicted, written as comments at the top.
std::string pythonPlan(const Trace &trace, const CostModel &model, const Plan &plan, std::string_view description);

// `text` as a Python string literal that holds exactly its characters: printable ASCII as
// is, anything else escaped, bytes that are not UTF-8 as U+FFFD.
std::string pythonString(std::string_view text);

} // namespace peaklens
