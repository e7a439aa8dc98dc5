// SPDX-License-Identifier: Apache-2.0
#pragma once
// The axes of the report's charts: round ticks (niceTicks) in the unit a reader expects,
// binary units for bytes and ns/us/ms/s for time, each tick labelled.

#include <string>
#include <vector>

namespace peaklens {

struct ChartAxis
{
    std::vector<double> ticks;       // in bytes or ns, ascending
    std::vector<std::string> labels; // one per tick: "0", "50 MiB", "1.5 GiB", "20 ms"
    double end = 1;                  // where the axis ends, in bytes or ns
};

// From 0 to the first tick at or above maxBytes, which is where the axis ends: a value
// axis whose top is a labelled round number. The unit is the largest the top reaches.
ChartAxis bytesAxis(double maxBytes, int targetCount);

// From 0 to spanNs, which is where the axis ends: time runs to the data's last moment,
// with ticks at round offsets inside it.
ChartAxis timeAxis(double spanNs, int targetCount);

} // namespace peaklens
