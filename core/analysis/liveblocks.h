#pragma once
// The blocks allocated and not yet freed while walking a trace's events in time order:
// (device, address) -> index of the allocating event. Shared by the peak's live set and
// the per-layer activation measurement.

#include "core/trace/trace.h"
#include "lanedevices.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace peaklens {

class LiveBlocks
{
public:
    explicit LiveBlocks(const Trace &trace, const LaneDevices &lanes);

    // Applies event i: an allocation becomes live (replacing a block never freed at the
    // same address), a free ends the block it matches; unmatched frees are ignored.
    void apply(std::size_t i)
    {
        const Key key{m_events.addr(i), m_lanes.deviceOfLane[m_events.lane(i)]};
        const std::int64_t delta = m_events.deltaBytes(i);
        if (delta > 0)
            m_live.insert_or_assign(key, i);
        else if (delta < 0)
            m_live.erase(key);
    }

    // Indices of the allocating events of the live blocks, in time order.
    std::vector<std::size_t> allocationIndices() const;
    template<typename Visit>
    void forEach(Visit visit) const
    {
        for (const auto &[key, index] : m_live)
            visit(index);
    }
    std::size_t size() const { return m_live.size(); }

private:
    struct Key
    {
        std::uint64_t addr;
        std::uint32_t device;
        bool operator==(const Key &) const = default;
    };
    struct KeyHash
    {
        std::size_t operator()(const Key &key) const
        {
            return std::hash<std::uint64_t>()(key.addr * 0x9E3779B97F4A7C15ull ^ key.device);
        }
    };

    const MemoryEvents &m_events;
    const LaneDevices &m_lanes;
    std::unordered_map<Key, std::size_t, KeyHash> m_live;
};

} // namespace peaklens
