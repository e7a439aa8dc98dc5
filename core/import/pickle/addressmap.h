// SPDX-License-Identifier: Apache-2.0
#pragma once
// Addresses to small values: the blocks a snapshot's trace allocated and has not freed yet.
// Open addressing with linear probing, so that each of the millions of allocs and frees of a
// big trace is a probe or two, with no node to allocate or free.

#include <cstdint>
#include <utility>
#include <vector>

namespace peaklens::pickle {

template<typename T>
class AddressMap
{
public:
    // The value at addr, default-made if it was not there; true when it was not.
    std::pair<T &, bool> tryEmplace(std::uint64_t addr)
    {
        if (2 * (m_size + 1) > m_slots.size())
            grow();
        std::size_t i = home(addr);
        for (; m_slots[i].used; i = next(i)) {
            if (m_slots[i].addr == addr)
                return {m_slots[i].value, false};
        }
        m_slots[i] = Slot{addr, T{}, true};
        ++m_size;
        return {m_slots[i].value, true};
    }

    // The value at addr, or nullptr; valid until the map next changes.
    T *find(std::uint64_t addr)
    {
        const std::size_t i = indexOf(addr);
        return i == kMissing ? nullptr : &m_slots[i].value;
    }
    bool contains(std::uint64_t addr) const { return indexOf(addr) != kMissing; }

    void erase(std::uint64_t addr)
    {
        std::size_t hole = indexOf(addr);
        if (hole == kMissing)
            return;
        // Moves back what probed past the hole, so that no search stops short at it.
        for (std::size_t j = next(hole); m_slots[j].used; j = next(j)) {
            const std::size_t wanted = home(m_slots[j].addr);
            const bool reachable = hole <= j ? (wanted <= hole || wanted > j) : (wanted <= hole && wanted > j);
            if (reachable) {
                m_slots[hole] = m_slots[j];
                hole = j;
            }
        }
        m_slots[hole].used = false;
        --m_size;
    }

private:
    struct Slot
    {
        std::uint64_t addr = 0;
        T value{};
        bool used = false;
    };
    static constexpr std::size_t kMissing = SIZE_MAX;

    // Blocks lie at multiples of 512: a multiplicative hash spreads them over the table.
    std::size_t home(std::uint64_t addr) const { return (addr * 0x9E3779B97F4A7C15ull) >> m_shift; }
    std::size_t next(std::size_t i) const { return (i + 1) & (m_slots.size() - 1); }

    std::size_t indexOf(std::uint64_t addr) const
    {
        if (m_slots.empty())
            return kMissing;
        for (std::size_t i = home(addr); m_slots[i].used; i = next(i)) {
            if (m_slots[i].addr == addr)
                return i;
        }
        return kMissing;
    }

    void grow()
    {
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
        m_shift = 64;
        for (std::size_t size = m_slots.size(); size > 1; size >>= 1)
            --m_shift;
        for (const Slot &slot : old) {
            if (!slot.used)
                continue;
            std::size_t i = home(slot.addr);
            while (m_slots[i].used)
                i = next(i);
            m_slots[i] = slot;
        }
    }

    std::vector<Slot> m_slots; // a power of two, at most half used
    std::size_t m_size = 0;
    unsigned m_shift = 64;
};

} // namespace peaklens::pickle
