// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per memory pool of one device (the caching allocator's default pool, a CUDA graph's
// private pool, a torch.cuda.MemPool): what its segments reserve and its blocks hold, at
// the device's peak and at the trace's end, and the reserved bytes no block holds.

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

struct PoolFigures
{
    MemoryPool pool;
    std::int64_t reservedBytes = 0;        // at the trace's end
    std::int64_t allocatedBytes = 0;       // at the trace's end
    std::int64_t highestReservedBytes = 0; // over the trace
    std::int64_t allocatedAtPeakBytes = 0; // when the device's allocated peak was reached
    // Reserved in the pool's segments and held by none of its blocks at the trace's end:
    // memory the pool keeps that no other pool (nor the default one) can use.
    std::int64_t freeInSegmentsBytes() const { return reservedBytes - allocatedBytes; }
    bool operator==(const PoolFigures &) const = default;
};

// The pools of `device`'s lanes, the default pool first, then by id. `peakEvent`: the event
// that reached the device's allocated peak (DevicePeak::eventIndex), if any.
std::vector<PoolFigures> poolFigures(const Trace &trace, Device device, std::optional<std::size_t> peakEvent);

// Whether the trace's lanes name any pool but the default one.
bool hasPrivatePools(const Trace &trace);

} // namespace peaklens
