#include "categoryledger.h"

namespace peaklens {

MemoryEvent CategoryLedger::event(std::int64_t timeNs, std::int64_t delta, std::uint64_t addr, Category category) const
{
    return MemoryEvent{timeNs, delta, addr, m_lane, kNoLayer, 0, category, Phase::Other};
}

void CategoryLedger::apply(std::int64_t timeNs, Category category, std::int64_t delta, std::vector<MemoryEvent> &events)
{
    std::vector<Block> &live = m_live[static_cast<std::size_t>(category)];
    if (delta > 0) {
        live.push_back({m_nextAddress, delta});
        m_nextAddress += 0x1000;
        events.push_back(event(timeNs, delta, live.back().addr, category));
        return;
    }
    std::int64_t toFree = -delta;
    while (toFree > 0 && !live.empty()) {
        const Block block = live.back();
        live.pop_back();
        events.push_back(event(timeNs, -block.bytes, block.addr, category));
        if (block.bytes > toFree) {
            live.push_back({m_nextAddress, block.bytes - toFree});
            m_nextAddress += 0x1000;
            events.push_back(event(timeNs, block.bytes - toFree, live.back().addr, category));
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
