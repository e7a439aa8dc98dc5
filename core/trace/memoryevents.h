// SPDX-License-Identifier: Apache-2.0
#pragma once
// The memory events of a trace as a struct of arrays, 32 bytes per event: time, delta and
// address in full, lane/layer/stack/category/phase packed into two 32-bit words.
// An event's step is not stored: it is the step whose time span holds the event.

#include "category.h"
#include "layer.h"
#include "phase.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace peaklens {

struct MemoryEvent
{
    std::int64_t timeNs = 0;
    std::int64_t deltaBytes = 0; // > 0 allocation, < 0 free
    std::uint64_t addr = 0;
    std::uint32_t lane = 0;
    std::uint32_t layer = kNoLayer;
    std::uint32_t stack = 0; // 0 is the empty stack
    Category category = Category::Unknown;
    Phase phase = Phase::Other;

    bool operator==(const MemoryEvent &) const = default;
};

// Leaves new elements uninitialised, for bulk decoders that write every one: filling a
// column with zeros first would cost as much again.
template<typename T>
struct ColumnAllocator
{
    using value_type = T;
    ColumnAllocator() = default;
    template<typename U>
    ColumnAllocator(const ColumnAllocator<U> &)
    {
    }
    T *allocate(std::size_t count) { return static_cast<T *>(::operator new(count * sizeof(T))); }
    void deallocate(T *data, std::size_t) { ::operator delete(data); }
    template<typename U, typename... Args>
    void construct(U *at, Args &&...args)
    {
        if constexpr (sizeof...(Args) == 0)
            ::new (static_cast<void *>(at)) U;
        else
            ::new (static_cast<void *>(at)) U(std::forward<Args>(args)...);
    }
    bool operator==(const ColumnAllocator &) const = default;
};

class MemoryEvents
{
public:
    template<typename T>
    using Column = std::vector<T, ColumnAllocator<T>>;

    // What a bulk decoder fills in: `count` new events, each written exactly once, layer
    // and lane packed with packLayerLane, stack, category and phase with packStackTags.
    struct Slots
    {
        std::span<std::int64_t> timeNs;
        std::span<std::int64_t> deltaBytes;
        std::span<std::uint64_t> addr;
        std::span<std::uint32_t> layerLane;
        std::span<std::uint32_t> stackTags;
    };

    static constexpr std::uint32_t kMaxLanes = 1u << 10;
    static constexpr std::uint32_t kMaxStacks = 1u << 24;

    std::size_t size() const { return m_timeNs.size(); }
    bool empty() const { return m_timeNs.empty(); }
    void reserve(std::size_t count);
    void clear();

    // The caller guarantees lane < kMaxLanes, layer <= kNoLayer and stack < kMaxStacks.
    // Grows by `count` uninitialised events for the caller to fill in before any is read.
    Slots appendUninitialized(std::size_t count);
    // Holds `count` uninitialised events, keeping the memory it had: a reused buffer.
    Slots resizeUninitialized(std::size_t count);

    void append(const MemoryEvent &event)
    {
        m_timeNs.push_back(event.timeNs);
        m_deltaBytes.push_back(event.deltaBytes);
        m_addr.push_back(event.addr);
        m_layerLane.push_back(packLayerLane(event.layer, event.lane));
        m_stackTags.push_back(packStackTags(event.stack, event.category, event.phase));
    }

    // Events [begin, end) of `other`, after these.
    void append(const MemoryEvents &other, std::size_t begin, std::size_t end);

    MemoryEvent at(std::size_t i) const
    {
        return {m_timeNs[i], m_deltaBytes[i], m_addr[i], lane(i), layer(i), stack(i), category(i), phase(i)};
    }

    std::int64_t timeNs(std::size_t i) const { return m_timeNs[i]; }
    std::int64_t deltaBytes(std::size_t i) const { return m_deltaBytes[i]; }
    std::uint64_t addr(std::size_t i) const { return m_addr[i]; }
    std::uint32_t lane(std::size_t i) const { return m_layerLane[i] & (kMaxLanes - 1); }
    std::uint32_t layer(std::size_t i) const { return m_layerLane[i] >> kLaneBits; }
    std::uint32_t stack(std::size_t i) const { return m_stackTags[i] & (kMaxStacks - 1); }
    Category category(std::size_t i) const { return static_cast<Category>((m_stackTags[i] >> kStackBits) & 15u); }
    Phase phase(std::size_t i) const { return static_cast<Phase>(m_stackTags[i] >> (kStackBits + kCategoryBits)); }

    std::span<const std::int64_t> timesNs() const { return m_timeNs; }
    std::span<const std::int64_t> deltas() const { return m_deltaBytes; }

    void setCategory(std::size_t i, Category category) { m_stackTags[i] = packStackTags(stack(i), category, phase(i)); }
    void setLayer(std::size_t i, std::uint32_t layer) { m_layerLane[i] = packLayerLane(layer, lane(i)); }

    bool isSortedByTime() const;
    // Stable: events with equal times keep their order.
    void sortByTime();

    bool operator==(const MemoryEvents &) const = default;

    // What one event costs in memory, all columns together.
    static constexpr std::size_t kBytesPerEvent = 3 * sizeof(std::int64_t) + 2 * sizeof(std::uint32_t);

    // How two columns pack their fields, for bulk decoders filling Slots.
    static constexpr unsigned kLaneBits = 10;
    static constexpr unsigned kStackBits = 24;
    static constexpr unsigned kCategoryBits = 4;
    static std::uint32_t packLayerLane(std::uint32_t layer, std::uint32_t lane) { return layer << kLaneBits | lane; }
    static std::uint32_t packStackTags(std::uint32_t stack, Category category, Phase phase)
    {
        return stack | static_cast<std::uint32_t>(category) << kStackBits
               | static_cast<std::uint32_t>(phase) << (kStackBits + kCategoryBits);
    }

private:
    Column<std::int64_t> m_timeNs;
    Column<std::int64_t> m_deltaBytes;
    Column<std::uint64_t> m_addr;
    Column<std::uint32_t> m_layerLane;
    Column<std::uint32_t> m_stackTags;
};

static_assert(kNoLayer < (1u << 22), "layer indices must fit the 22 bits next to the lane");

} // namespace peaklens
