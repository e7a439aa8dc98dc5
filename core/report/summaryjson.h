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
                          const std::optional<StackGrouping> &grouping = std::nullopt);

} // namespace peaklens
