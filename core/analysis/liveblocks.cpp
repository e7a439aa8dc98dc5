// SPDX-License-Identifier: Apache-2.0
#include "liveblocks.h"

#include <algorithm>

namespace peaklens {

void LiveBlocks::insert(const Block &block)
{
    // At most half full: probes stay short.
    if (2 * (m_size + 1) > m_slots.size())
        grow();
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t at = home(block.addr, block.device);; at = (at + 1) & mask) {
        Block &slot = m_slots[at];
        if (slot.event == kEmpty) {
            slot = block;
            ++m_size;
            return;
        }
        if (slot.addr == block.addr && slot.device == block.device) {
            slot = block;
            return;
        }
    }
}

void LiveBlocks::erase(std::uint64_t addr, std::uint32_t device)
{
    const std::size_t mask = m_slots.size() - 1;
    std::size_t at = home(addr, device);
    for (;; at = (at + 1) & mask) {
        const Block &slot = m_slots[at];
        if (slot.event == kEmpty)
            return;
        if (slot.addr == addr && slot.device == device)
            break;
    }
    // Backward-shift deletion: move later members of the run into the gap when their
    // home lies at or before it, so no probe ever stops early at a hole.
    for (std::size_t next = (at + 1) & mask;; next = (next + 1) & mask) {
        const Block &slot = m_slots[next];
        if (slot.event == kEmpty)
            break;
        const std::size_t want = home(slot.addr, slot.device);
        if (((next - want) & mask) >= ((next - at) & mask)) {
            m_slots[at] = slot;
            at = next;
        }
    }
    m_slots[at].event = kEmpty;
    --m_size;
}

void LiveBlocks::grow()
{
    std::vector<Block> old(m_slots.size() * 2);
    old.swap(m_slots);
    --m_shift;
    m_size = 0;
    for (const Block &block : old) {
        if (block.event != kEmpty)
            insert(block);
    }
}

std::vector<LiveBlocks::Block> LiveBlocks::blocksInOrder() const
{
    std::vector<Block> blocks;
    blocks.reserve(m_size);
    forEach([&](const Block &block) { blocks.push_back(block); });
    std::sort(blocks.begin(), blocks.end(), [](const Block &a, const Block &b) { return a.event < b.event; });
    return blocks;
}

std::vector<std::size_t> LiveBlocks::allocationIndices() const
{
    std::vector<std::size_t> indices;
    indices.reserve(m_size);
    forEach([&](const Block &block) { indices.push_back(block.event); });
    std::sort(indices.begin(), indices.end());
    return indices;
}

} // namespace peaklens
