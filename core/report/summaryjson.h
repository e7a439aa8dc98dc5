// SPDX-License-Identifier: Apache-2.0
#pragma once
// The JSON object of `peaklens-cli summary --json`, documented in docs/cli.md.

#include "core/analysis/blockgroups.h"
#include "core/analysis/tracesummary.h"

#include <optional>
#include <string>

namespace peaklens {

// top limits the layers (largest activation first) and the live groups; nullopt keeps all.
// With a grouping, the live set at the peak also has its groups (by_group).
std::string summaryToJson(const Trace &trace, const TraceSummary &summary, std::optional<std::size_t> top,
                          const std::optional<BlockGrouping> &grouping = std::nullopt);
// Parts of that object, for answers that give one of them (peaklens-cli query): its `peak`
// ("null" without one), and a live set at any moment as `live_at_peak` gives the peak's.
std::string peakToJson(const Trace &trace, const TraceSummary &summary);
std::string liveSetToJson(const Trace &trace, const LiveSet &live, std::optional<std::size_t> top,
                          const std::optional<BlockGrouping> &grouping);

} // namespace peaklens
