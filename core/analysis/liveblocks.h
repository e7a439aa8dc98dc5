// SPDX-License-Identifier: Apache-2.0
#pragma once
// The blocks allocated and not yet freed while walking a trace's events in time order:
// (device, address) -> the allocating event. Shared by the peak's live set and the
// per-layer activation measurement, which apply every event of a trace: an open-
// addressing table, so an allocation or a free is a probe or two with no node to allocate.

#include "core/trace/trace.h"

#include <cstdint>
#include <vector>

namespace peaklens {

class LiveBlocks
{
public:
    // What is kept of a live block's allocating event: enough to group and measure it
    // without the event, so events can be applied a chunk at a time and dropped.
    struct Block
    {
        std::uint64_t addr = 0;
        std::uint32_t device = 0;
        std::uint32_t event = kEmpty; // its index in the trace; fewer than 2^32 events
        std::int64_t bytes = 0;
        std::int64_t timeNs = 0;
        std::uint32_t layer = kNoLayer;
        std::uint32_t stack = 0;
        Category category = Category::Unknown;
        Phase phase = Phase::Other;
        std::uint16_t lane = 0; // fewer than MemoryEvents::kMaxLanes
    };

    // Applies event i of `events`, the trace's event `index`, on the device with that
    // index: an allocation becomes live (replacing a block never freed at the same
    // address), a free ends the block it matches; unmatched frees are ignored.
    void apply(const MemoryEvents &events, std::size_t i, std::size_t index, std::uint32_t device)
    {
        const std::int64_t delta = events.deltaBytes(i);
        if (delta > 0)
            insert(Block{events.addr(i), device, static_cast<std::uint32_t>(index), delta, events.timeNs(i), events.layer(i),
                         events.stack(i), events.category(i), events.phase(i), static_cast<std::uint16_t>(events.lane(i))});
        else if (delta < 0)
            erase(events.addr(i), device);
    }

    // Indices of the allocating events of the live blocks, in time order.
    std::vector<std::size_t> allocationIndices() const;
    template<typename Visit>
    void forEach(Visit visit) const
    {
        for (const Block &block : m_slots) {
            if (block.event != kEmpty)
                visit(block);
        }
    }
    std::size_t size() const { return m_size; }
    // The live blocks in the order they were allocated.
    std::vector<Block> blocksInOrder() const;

private:
    static constexpr std::uint32_t kEmpty = UINT32_MAX;

    std::size_t home(std::uint64_t addr, std::uint32_t device) const
    {
        return static_cast<std::size_t>(((addr ^ std::uint64_t(device) << 56) * 0x9E3779B97F4A7C15ull) >> m_shift);
    }
    void insert(const Block &block);
    void erase(std::uint64_t addr, std::uint32_t device);
    void grow();

    std::vector<Block> m_slots = std::vector<Block>(std::size_t(1) << kInitialBits);
    std::size_t m_size = 0;
    static constexpr unsigned kInitialBits = 10;
    unsigned m_shift = 64 - kInitialBits;
};

} // namespace peaklens
