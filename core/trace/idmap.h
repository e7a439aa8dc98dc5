// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ids of 64-bit keys (a call-stack node's parent and frame), in one open-addressed table: a
// lookup is a multiply and a probe or two, and nothing is allocated per key, where
// std::unordered_map allocates a node for each. Ids are below UINT32_MAX.

#include <cstdint>
#include <utility>
#include <vector>

namespace peaklens {

class IdMap
{
public:
    // The id `key` has, given `id` first when it has none: (its id, whether it was new).
    std::pair<std::uint32_t, bool> tryEmplace(std::uint64_t key, std::uint32_t id)
    {
        if (2 * (m_size + 1) > m_slots.size())
            grow();
        for (std::size_t slot = slotOf(key);; slot = (slot + 1) & (m_slots.size() - 1)) {
            Slot &s = m_slots[slot];
            if (s.id == kEmpty) {
                s = {key, id};
                ++m_size;
                return {id, true};
            }
            if (s.key == key)
                return {s.id, false};
        }
    }
    std::size_t size() const { return m_size; }

private:
    static constexpr std::uint32_t kEmpty = UINT32_MAX;
    struct Slot
    {
        std::uint64_t key = 0;
        std::uint32_t id = kEmpty;
    };

    // Fibonacci hashing: the key's bits spread over the table's index.
    std::size_t slotOf(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> m_shift); }

    void grow()
    {
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(old.empty() ? 64 : old.size() * 2, Slot{});
        m_shift = 64;
        for (std::size_t n = m_slots.size(); n > 1; n >>= 1)
            --m_shift;
        m_size = 0;
        for (const Slot &s : old) {
            if (s.id != kEmpty)
                tryEmplace(s.key, s.id);
        }
    }

    std::vector<Slot> m_slots; // a power of two, at most half full
    std::size_t m_size = 0;
    int m_shift = 64;
};

} // namespace peaklens
