// SPDX-License-Identifier: Apache-2.0
#pragma once
// A change of reserved memory: a segment the allocator mapped (+) or released (-).

#include <cstdint>

namespace peaklens {

struct ReservedEvent
{
    std::int64_t timeNs = 0;
    std::int64_t deltaBytes = 0;
    std::uint64_t addr = 0;
    std::uint32_t lane = 0;

    bool operator==(const ReservedEvent &) const = default;
};

} // namespace peaklens
