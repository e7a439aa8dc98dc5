// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where an axis puts its ticks: at round numbers (1, 2 or 5 times a power of ten), so that
// a reader sees 0, 50, 100, 150 MiB rather than 0, 75.30, 150.6 MiB.

#include <vector>

namespace peaklens {

// The tick positions, ascending, from the last tick at or below `low` to the first at or
// above `high`, niceStep(high - low, targetCount) apart: about targetCount intervals (the
// nearest round step can make them up to 1.6 times fewer or more, and widening the bounds
// to ticks adds up to two). Empty when a bound is not finite or the span is too wide for a
// double; one tick when low equals high.
std::vector<double> niceTicks(double low, double high, int targetCount);

// The distance between ticks for an axis `span` long: 1, 2 or 5 times a power of ten, the
// one nearest span / targetCount. 0 when span is not positive and finite.
double niceStep(double span, int targetCount);

} // namespace peaklens
