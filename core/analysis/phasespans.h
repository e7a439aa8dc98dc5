// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where each phase of each step ran: the span from the first to the last range of that
// phase in that step. Timelines shade them.

#include "core/trace/trace.h"

#include <vector>

namespace peaklens {

struct PhaseSpan
{
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;
    Phase phase = Phase::Other;
    std::int64_t step = kNoStep;
};

// Forward, backward and optimizer spans, sorted by begin time.
std::vector<PhaseSpan> phaseSpans(const Trace &trace);

} // namespace peaklens
