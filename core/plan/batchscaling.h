// SPDX-License-Identifier: Apache-2.0
#pragma once
// "The largest batch that fits": activations grow with the batch, parameters, their
// gradients and optimizer state do not. A trace is scaled to another batch by scaling
// every block of the other categories, and planned again.

#include "planner.h"

#include <optional>

namespace peaklens {

// The trace with each block that is not a parameter, a gradient or optimizer state scaled
// by `factor` (its allocation and its free alike); in a bf16 replay, blocks the size of a
// parameter's half-precision copy (autocast's weight casts) are left as they are.
Trace withBatchScaled(const Trace &trace, double factor);

// The batch the trace was recorded with, when it says (peaklens-replay's spec).
std::optional<std::int64_t> tracedBatch(const Trace &trace);

struct BatchFit
{
    bool fits = false;                 // false: not even the traced batch (or a hundredth of it) fits
    double factor = 0;                 // the largest batch over the traced one
    std::optional<std::int64_t> batch; // in samples, when the traced batch is known
    CostModel model;                   // the step with activations scaled to it
    Plan plan;                         // the cheapest checkpoints for it
};

// The largest batch whose cheapest plan fits `budgetBytes`: in whole samples when
// `traced` (the traced batch) is known, else as a factor to a hundredth, at most 1024
// times the traced batch.
// `keepMargin` as in PlannerOptions.
inline constexpr std::int64_t kMaxTracedBatch = std::int64_t(1) << 40;

BatchFit largestBatch(const Trace &trace, const ChainSelection &selection, std::int64_t budgetBytes,
                      std::optional<std::int64_t> traced, bool keepMargin = true);

} // namespace peaklens
