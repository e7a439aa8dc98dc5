// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a trace that is still being written gained since an analysis last saw it: the
// index from which each table holds rows the analysis has not taken in (new rows, or rows
// moved by ones inserted before them), and whether it must start over.

#include <cstddef>

namespace peaklens {

struct TraceGrowth
{
    std::size_t eventsFrom = 0;
    std::size_t reservedFrom = 0;
    std::size_t rangesFrom = 0;
    std::size_t stepsFrom = 0;
    std::size_t kernelsFrom = 0;
    bool restart = false;  // events came before held ones, or categories changed: take all again
    bool complete = false; // nothing more will come: every step's events are in
};

} // namespace peaklens
