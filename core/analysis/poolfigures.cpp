// SPDX-License-Identifier: Apache-2.0
#include "poolfigures.h"

#include <algorithm>
#include <map>

namespace peaklens {

std::vector<PoolFigures> poolFigures(const Trace &trace, Device device, std::optional<std::size_t> peakEvent)
{
    std::map<MemoryPool, PoolFigures> pools;
    std::vector<PoolFigures *> ofLane(trace.lanes.size(), nullptr);
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
        if (trace.lanes[l].device == device) {
            PoolFigures &figures = pools[trace.lanes[l].pool];
            figures.pool = trace.lanes[l].pool;
            ofLane[l] = &figures;
        }
    }
    const MemoryEvents &events = trace.events;
    for (std::size_t i = 0; i < events.size(); ++i) {
        PoolFigures *figures = ofLane[events.lane(i)];
        if (!figures)
            continue;
        figures->allocatedBytes += events.deltaBytes(i);
        if (peakEvent && i == *peakEvent) {
            for (auto &[pool, each] : pools)
                each.allocatedAtPeakBytes = each.allocatedBytes;
        }
    }
    for (const ReservedEvent &event : trace.reserved) {
        if (PoolFigures *figures = event.lane < ofLane.size() ? ofLane[event.lane] : nullptr) {
            figures->reservedBytes += event.deltaBytes;
            figures->highestReservedBytes = std::max(figures->highestReservedBytes, figures->reservedBytes);
        }
    }
    std::vector<PoolFigures> out;
    out.reserve(pools.size());
    for (auto &[pool, figures] : pools) // MemoryPool orders the default pool, (0, 0), first
        out.push_back(figures);
    return out;
}

bool hasPrivatePools(const Trace &trace)
{
    return std::any_of(trace.lanes.begin(), trace.lanes.end(), [](const Lane &lane) { return !lane.pool.isDefault(); });
}

} // namespace peaklens
