#include "liveblocks.h"

#include <algorithm>

namespace peaklens {

LiveBlocks::LiveBlocks(const Trace &trace, const LaneDevices &lanes)
    : m_events(trace.events)
    , m_lanes(lanes)
{
}

std::vector<std::size_t> LiveBlocks::allocationIndices() const
{
    std::vector<std::size_t> indices;
    indices.reserve(m_live.size());
    for (const auto &[key, index] : m_live)
        indices.push_back(index);
    std::sort(indices.begin(), indices.end());
    return indices;
}

} // namespace peaklens
