// SPDX-License-Identifier: Apache-2.0
#pragma once
// A flame graph of live memory as an icicle chart for the report: all live memory across
// the top, each node's children in the row below it, widths proportional to bytes, labels
// where they fit and a <title> on every box with the full frame or module and its bytes.

#include "reportcharts.h"

#include "core/analysis/flamegraph.h"

#include <optional>
#include <string_view>

namespace peaklens {

// Nullopt when the graph has nothing to tell: no live memory, or every block in one
// placeholder ("(no stack)", "(no layer)").
std::optional<SvgChart> flameGraphChart(const FlameGraph &graph, std::string_view label);

// "all live memory — 6.532 GiB": the root's box, which the report's tests look for.
std::string flameRootLabel(const FlameGraph &graph);

} // namespace peaklens
