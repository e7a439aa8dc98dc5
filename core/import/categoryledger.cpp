// SPDX-License-Identifier: Apache-2.0
#include "categoryledger.h"

namespace peaklens {

MemoryEvent CategoryLedger::event(std::int64_t timeNs, std::int64_t delta, std::uint64_t addr, Category category) const
{
    return MemoryEvent{timeNs, delta, addr, m_lane, kNoLayer, 0, category, Phase::Other};
}

void CategoryLedger::apply(std::int64_t timeNs, Category category, std::int64_t delta, std::vector<MemoryEvent> &events)
{
    if (delta > 0) {
        std::vector<Block> &live = m_live[static_cast<std::size_t>(category)];
        live.push_back({m_nextAddress, delta});
        m_nextAddress += 0x1000;
        events.push_back(event(timeNs, delta, live.back().addr, category));
        return;
    }
    std::int64_t toFree = -delta;
    while (toFree > 0) {
        // The category's own newest block; when it has none left, the newest of any other
        // (bytes counted under one category when made and another when freed).
        std::size_t from = static_cast<std::size_t>(category);
        if (m_live[from].empty()) {
            for (std::size_t c = 0; c < m_live.size(); ++c) {
                if (!m_live[c].empty() && (m_live[from].empty() || m_live[c].back().addr > m_live[from].back().addr))
                    from = c;
            }
            if (m_live[from].empty())
                break;
        }
        std::vector<Block> &blocks = m_live[from];
        const auto blockCategory = static_cast<Category>(from);
        const Block block = blocks.back();
        blocks.pop_back();
        events.push_back(event(timeNs, -block.bytes, block.addr, blockCategory));
        if (block.bytes > toFree) {
            blocks.push_back({m_nextAddress, block.bytes - toFree});
            m_nextAddress += 0x1000;
            events.push_back(event(timeNs, block.bytes - toFree, blocks.back().addr, blockCategory));
            toFree = 0;
        } else {
            toFree -= block.bytes;
        }
    }
    if (toFree > 0) {
        events.push_back(event(timeNs, -toFree, m_nextAddress, category));
        m_nextAddress += 0x1000;
    }
}

} // namespace peaklens
