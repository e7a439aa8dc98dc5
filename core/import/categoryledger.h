// SPDX-License-Identifier: Apache-2.0
#pragma once
// Turns per-category byte deltas (memory-timeline exports carry no addresses) into
// allocations and frees of synthetic blocks, so the live set still splits by category.

#include "core/trace/memoryevents.h"

#include <array>
#include <vector>

namespace peaklens {

class CategoryLedger
{
public:
    explicit CategoryLedger(std::uint32_t lane)
        : m_lane(lane)
    {
    }

    // Appends the events for `delta` bytes of `category` at timeNs to `events`. Frees take
    // the category's newest blocks first, then the newest of other categories; a block
    // freed in part is freed whole and its rest allocated again. Freeing more than is live
    // in all frees a block that was never allocated.
    void apply(std::int64_t timeNs, Category category, std::int64_t delta, std::vector<MemoryEvent> &events);

private:
    struct Block
    {
        std::uint64_t addr;
        std::int64_t bytes;
    };

    MemoryEvent event(std::int64_t timeNs, std::int64_t delta, std::uint64_t addr, Category category) const;

    std::uint32_t m_lane;
    std::uint64_t m_nextAddress = 0x1000;
    std::array<std::vector<Block>, kCategoryCount> m_live;
};

} // namespace peaklens
