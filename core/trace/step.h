// SPDX-License-Identifier: Apache-2.0
#pragma once
// One training step (iteration): its number and its span of time.

#include <cstdint>

namespace peaklens {

struct Step
{
    std::int64_t number = 0;
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;

    std::int64_t durationNs() const { return endNs - beginNs; }
    bool contains(std::int64_t timeNs) const { return timeNs >= beginNs && timeNs < endNs; }
    bool operator==(const Step &) const = default;
};

} // namespace peaklens
