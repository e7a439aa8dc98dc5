#pragma once
// The blocks allocated and not yet freed while walking a trace's events in time order:
// (device, address) -> index of the allocating event. Shared by the peak's live set and
// the per-layer activation measurement, which apply every event of a trace: an open-
// addressing table, so an allocation or a free is a probe or two with no node to allocate.

#include "core/trace/trace.h"
#include "lanedevices.h"

#include <cstdint>
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
        const std::int64_t delta = m_events.deltaBytes(i);
        if (delta == 0)
            return;
        const Key key{m_events.addr(i), m_lanes.deviceOfLane[m_events.lane(i)]};
        if (delta > 0)
            insert(key, i);
        else
            erase(key);
    }

    // Indices of the allocating events of the live blocks, in time order.
    std::vector<std::size_t> allocationIndices() const;
    template<typename Visit>
    void forEach(Visit visit) const
    {
        for (const Slot &slot : m_slots) {
            if (slot.event != kEmpty)
                visit(static_cast<std::size_t>(slot.event));
        }
    }
    std::size_t size() const { return m_size; }

private:
    struct Key
    {
        std::uint64_t addr;
        std::uint32_t device;
    };
    struct Slot
    {
        std::uint64_t addr = 0;
        std::uint32_t device = 0;
        std::uint32_t event = kEmpty; // a trace holds fewer than 2^32 events
    };
    static constexpr std::uint32_t kEmpty = UINT32_MAX;

    std::size_t home(const Key &key) const
    {
        return static_cast<std::size_t>(((key.addr ^ std::uint64_t(key.device) << 56) * 0x9E3779B97F4A7C15ull) >> m_shift);
    }
    void insert(const Key &key, std::size_t event);
    void erase(const Key &key);
    void grow();

    const MemoryEvents &m_events;
    const LaneDevices &m_lanes;
    std::vector<Slot> m_slots;
    std::size_t m_size = 0;
    unsigned m_shift = 64;
};

} // namespace peaklens
