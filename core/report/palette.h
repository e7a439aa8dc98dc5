// SPDX-License-Identifier: Apache-2.0
#pragma once
// The colours PeakLens draws with, in one place for the app and every report: each memory
// category keeps its colour in every trace, layer bands take theirs in order, and the lines
// laid over a timeline (prediction, measurement, highlight) use colours no band uses.

#include "core/trace/category.h"
#include "core/trace/phase.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peaklens::palette {

using Rgb = std::uint32_t; // 0xRRGGBB

Rgb categoryColor(Category category);
// A band that is not a category (a layer, a run): its place in the order it is drawn.
Rgb seriesColor(std::size_t index);
// The band of a step's phase behind the curves, drawn faint.
Rgb phaseColor(Phase phase);

inline constexpr Rgb kTotal = 0x1d2330;       // the allocated total
inline constexpr Rgb kReserved = 0x5d6675;    // reserved by the allocator (dashed)
inline constexpr Rgb kPeak = 0xb42318;        // the peak's marker
inline constexpr Rgb kPredicted = 0x1d2330;   // the what-if prediction (dashed)
inline constexpr Rgb kMeasured = 0xc2185b;    // a rerun's measured curve
inline constexpr Rgb kHighlight = 0x7b2cbf;   // the selected layer's outline
inline constexpr Rgb kKernel = 0x2a6f97;      // a stream's kernels, in kernel lanes
inline constexpr Rgb kLargestFree = 0x1a7f37; // the allocator's largest free block (dotted)
inline constexpr Rgb kGrid = 0xe4e7ec;        // grid lines behind a chart
inline constexpr Rgb kAxis = 0x9aa1ad;        // an axis line, and the outline of a faint swatch
inline constexpr Rgb kOther = 0xc7ccd4;       // the groups a stacked chart shows together as "other"

// "#rrggbb", for SVG and HTML.
std::string hex(Rgb color);

// A category as a person reads it: "optimizer state", not the file's "optimizer_state".
std::string_view categoryLabel(Category category);

} // namespace peaklens::palette
