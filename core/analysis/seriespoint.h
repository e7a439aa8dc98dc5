// SPDX-License-Identifier: Apache-2.0
#pragma once
// One point of a memory series: the bytes held from this time until the next point.

#include <cstdint>

namespace peaklens {

struct SeriesPoint
{
    std::int64_t timeNs = 0;
    std::int64_t bytes = 0;
    bool operator==(const SeriesPoint &) const = default;
};

} // namespace peaklens
