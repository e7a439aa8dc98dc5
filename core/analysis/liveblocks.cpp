#include "liveblocks.h"

#include <algorithm>

namespace peaklens {

namespace {
constexpr unsigned kInitialBits = 10;
}

LiveBlocks::LiveBlocks(const Trace &trace, const LaneDevices &lanes)
    : m_events(trace.events)
    , m_lanes(lanes)
    , m_slots(std::size_t(1) << kInitialBits)
    , m_shift(64 - kInitialBits)
{
}

void LiveBlocks::insert(const Key &key, std::size_t event)
{
    // At most half full: probes stay short.
    if (2 * (m_size + 1) > m_slots.size())
        grow();
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t at = home(key);; at = (at + 1) & mask) {
        Slot &slot = m_slots[at];
        if (slot.event == kEmpty) {
            slot = Slot{key.addr, key.device, static_cast<std::uint32_t>(event)};
            ++m_size;
            return;
        }
        if (slot.addr == key.addr && slot.device == key.device) {
            slot.event = static_cast<std::uint32_t>(event);
            return;
        }
    }
}

void LiveBlocks::erase(const Key &key)
{
    const std::size_t mask = m_slots.size() - 1;
    std::size_t at = home(key);
    for (;; at = (at + 1) & mask) {
        const Slot &slot = m_slots[at];
        if (slot.event == kEmpty)
            return;
        if (slot.addr == key.addr && slot.device == key.device)
            break;
    }
    // Backward-shift deletion: move later members of the run into the gap when their
    // home lies at or before it, so no probe ever stops early at a hole.
    for (std::size_t next = (at + 1) & mask;; next = (next + 1) & mask) {
        const Slot &slot = m_slots[next];
        if (slot.event == kEmpty)
            break;
        const std::size_t want = home(Key{slot.addr, slot.device});
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
    std::vector<Slot> old(m_slots.size() * 2);
    old.swap(m_slots);
    --m_shift;
    m_size = 0;
    for (const Slot &slot : old) {
        if (slot.event != kEmpty)
            insert(Key{slot.addr, slot.device}, slot.event);
    }
}

std::vector<std::size_t> LiveBlocks::allocationIndices() const
{
    std::vector<std::size_t> indices;
    indices.reserve(m_size);
    forEach([&](std::size_t index) { indices.push_back(index); });
    std::sort(indices.begin(), indices.end());
    return indices;
}

} // namespace peaklens
