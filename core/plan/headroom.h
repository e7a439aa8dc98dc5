// SPDX-License-Identifier: Apache-2.0
#pragma once
// What gives a run its headroom back when a step comes near the device's memory: the
// cheapest checkpoint set the planner finds for the device's memory less a margin, on the
// cost model of what has been recorded so far. The warnings near capacity carry it (the
// app's live status line, `peaklens-cli watch`), so the user can stop the run and rerun
// with those toggles.

#include "planner.h"

#include <cstdint>
#include <optional>
#include <string>

namespace peaklens {

// The margin the warnings keep free by default: 5 % of the device's memory.
inline constexpr double kHeadroomMargin = 0.05;

// The device's memory as the trace's metadata says it (metakey::DeviceMemory); none when
// it does not.
std::optional<std::int64_t> deviceCapacity(const Trace &trace);

// The warnings' rule: a step that peaked at `peakBytes` came within `margin` (a fraction)
// of the device's `capacityBytes`.
bool nearCapacity(std::int64_t peakBytes, std::int64_t capacityBytes, double margin);

struct HeadroomAdvice
{
    std::int64_t budgetBytes = 0; // the capacity less the margin
    Plan plan;                    // planForBudget on the model, for budgetBytes
    std::string strategy;         // the plan as a strategy ("blocks.0,blocks.2"), for a rerun

    // "checkpointing blocks.0, blocks.2 (2 of 12 layers) would keep it to 71.2 GiB for
    // +38.0 ms a step", or why nothing would.
    std::string sentence(const CostModel &model) const;
};

// margin: a fraction of the capacity (0.05 keeps 5 % free).
HeadroomAdvice adviseHeadroom(const CostModel &model, std::int64_t capacityBytes, double margin);

} // namespace peaklens
