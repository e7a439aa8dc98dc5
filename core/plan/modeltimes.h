// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cost model's times: per chain layer the median over the trace's steps, a warm-up's
// outlier set aside, and what a checkpoint adds where calibration steps measured it.

#include "costmodel.h"

#include <vector>

namespace peaklens {

// Sets the model's step time to the median of these steps' and its spread to their median
// absolute deviation; leaves both alone with fewer than two steps.
void useMedianStepTime(CostModel &model, const std::vector<std::int64_t> &stepTimesNs);

// With several steps, each chain layer's forward and backward time is the median over the
// steps (a single step's are noisy) and the step time theirs; a layer far slower than the
// chain's others (a fresh process's first call) is flagged and takes the chain's median;
// recomputeNs is the calibration steps' "checkpoint.costs" where the trace has them, else
// the forward time.
void useStepTimes(const Trace &trace, CostModel &model);

} // namespace peaklens
