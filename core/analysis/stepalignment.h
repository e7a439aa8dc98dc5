// SPDX-License-Identifier: Apache-2.0
#pragma once
// One step of a run laid onto the clock of the same step of another (a rerun onto its
// baseline): the step's begin and end and each of its phases' begins and ends are mapped
// onto the baseline's and the time between them stretched linearly, so the two curves
// line up phase by phase whatever each machine's speed. Where the two steps' phases do
// not match one for one, only the step's begin and end are mapped.

#include "core/analysis/timelineseries.h"

#include <optional>
#include <span>
#include <vector>

namespace peaklens {

struct StepAlignment
{
    std::vector<std::int64_t> fromNs; // boundaries on the run's clock, increasing
    std::vector<std::int64_t> toNs;   // the same boundaries on the baseline's clock

    std::int64_t map(std::int64_t ns) const;
};

// Unset when either trace lacks the step (or, without `stepNumber`, has no step at all).
std::optional<StepAlignment> alignSteps(const Trace &run, const Trace &baseline, std::optional<std::int64_t> stepNumber);

// The run's series over its step, on the baseline's clock: its value as the step began,
// each change inside the step, and the value it ends the step with at the step's end.
std::vector<SeriesPoint> alignedSeries(std::span<const SeriesPoint> series, const StepAlignment &alignment);

} // namespace peaklens
