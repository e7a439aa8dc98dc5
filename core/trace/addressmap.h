// SPDX-License-Identifier: Apache-2.0
#pragma once
// A map from 64-bit keys (addresses of live blocks, a call-stack node's parent and frame)
// to small values, in one open-addressed table with linear probing: a lookup is a multiply
// and a probe or two, and nothing is allocated per key, where std::unordered_map allocates
// a node for each. Erasing shifts the probe run back, so no tombstones pile up in a map
// that blocks come into and leave millions of times.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace peaklens {

template<typename Value>
class AddressMap
{
public:
    // The value `key` has, given `value` first when it has none: (a pointer to its value,
    // whether it was new). The pointer holds until the next insertion.
    std::pair<Value *, bool> tryEmplace(std::uint64_t key, Value value)
    {
        if (2 * (m_size + 1) > m_slots.size())
            grow();
        for (std::size_t slot = home(key);; slot = next(slot)) {
            Slot &s = m_slots[slot];
            if (!s.used) {
                s = {key, std::move(value), true};
                ++m_size;
                return {&s.value, true};
            }
            if (s.key == key)
                return {&s.value, false};
        }
    }
    void insertOrAssign(std::uint64_t key, Value value)
    {
        auto [held, inserted] = tryEmplace(key, value);
        if (!inserted)
            *held = std::move(value);
    }
    Value *find(std::uint64_t key)
    {
        if (m_slots.empty())
            return nullptr;
        for (std::size_t slot = home(key);; slot = next(slot)) {
            Slot &s = m_slots[slot];
            if (!s.used)
                return nullptr;
            if (s.key == key)
                return &s.value;
        }
    }
    // Removes the key (the value `held`, as find gave it).
    void erase(Value *held)
    {
        auto hole = static_cast<std::size_t>(reinterpret_cast<const char *>(held)
                                             - reinterpret_cast<const char *>(&m_slots.front().value))
                    / sizeof(Slot);
        // Each later slot of the run moves into the hole unless its home lies after the hole.
        for (std::size_t slot = next(hole); m_slots[slot].used; slot = next(slot)) {
            const std::size_t want = home(m_slots[slot].key);
            const bool staysAfterHole = hole <= slot ? (hole < want && want <= slot) : (hole < want || want <= slot);
            if (!staysAfterHole) {
                m_slots[hole] = std::move(m_slots[slot]);
                hole = slot;
            }
        }
        m_slots[hole].used = false;
        --m_size;
    }
    std::size_t size() const { return m_size; }

private:
    struct Slot
    {
        std::uint64_t key = 0;
        Value value{};
        bool used = false;
    };

    // Fibonacci hashing: the key's bits spread over the table's index.
    std::size_t home(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> m_shift); }
    std::size_t next(std::size_t slot) const { return (slot + 1) & (m_slots.size() - 1); }

    void grow()
    {
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(old.empty() ? 64 : old.size() * 2, Slot{});
        m_shift = 64;
        for (std::size_t n = m_slots.size(); n > 1; n >>= 1)
            --m_shift;
        m_size = 0;
        for (Slot &s : old) {
            if (s.used)
                tryEmplace(s.key, std::move(s.value));
        }
    }

    std::vector<Slot> m_slots; // a power of two, at most half full
    std::size_t m_size = 0;
    int m_shift = 64;
};

} // namespace peaklens
