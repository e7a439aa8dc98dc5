// SPDX-License-Identifier: Apache-2.0
#pragma once
// An array that only grows, whose copies share the elements it held when they were made:
// a copy costs a pointer, not its elements, so a series built while a run is followed can
// be handed to the views every time it grows at a cost that does not grow with it. The
// original appends in place past what its copies hold (they never read that far); a copy
// appended to, or an original whose room runs out, moves to a buffer of its own and
// leaves the old one to the copies that hold it. One thread appends to an array; its
// copies may be read on any.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

namespace peaklens {

template<typename T>
class GrowingArray
{
public:
    GrowingArray() = default;
    GrowingArray(const GrowingArray &other)
        : m_data(other.m_data)
        , m_size(other.m_size)
        , m_capacity(other.m_size) // its first append moves it to a buffer of its own
    {
        other.m_shared.store(other.m_size, std::memory_order_relaxed);
    }
    GrowingArray(GrowingArray &&other) noexcept
        : m_data(std::move(other.m_data))
        , m_size(std::exchange(other.m_size, 0))
        , m_capacity(std::exchange(other.m_capacity, 0))
        , m_shared(other.m_shared.exchange(0, std::memory_order_relaxed))
    {
    }
    GrowingArray &operator=(const GrowingArray &other)
    {
        if (this != &other)
            *this = GrowingArray(other);
        return *this;
    }
    GrowingArray &operator=(GrowingArray &&other) noexcept
    {
        m_data = std::move(other.m_data);
        m_size = std::exchange(other.m_size, 0);
        m_capacity = std::exchange(other.m_capacity, 0);
        m_shared.store(other.m_shared.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
        return *this;
    }

    void push_back(const T &value)
    {
        if (m_size == m_capacity)
            moveTo(std::max<std::size_t>(16, m_capacity * 2));
        m_data[m_size++] = value;
    }
    void reserve(std::size_t capacity)
    {
        if (capacity > m_capacity)
            moveTo(capacity);
    }

    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    const T *data() const { return m_data.get(); }
    const T *begin() const { return data(); }
    const T *end() const { return data() + m_size; }
    const T &operator[](std::size_t i) const { return m_data[i]; }
    const T &front() const { return m_data[0]; }
    const T &back() const { return m_data[m_size - 1]; }

    // The last element, to change in place: null when a copy holds it.
    T *unsharedBack()
    {
        if (m_size == 0 || m_size <= m_shared.load(std::memory_order_relaxed))
            return nullptr;
        return &m_data[m_size - 1];
    }

    bool operator==(const GrowingArray &other) const { return std::equal(begin(), end(), other.begin(), other.end()); }

private:
    void moveTo(std::size_t capacity)
    {
        std::shared_ptr<T[]> moved(new T[capacity]);
        std::copy(begin(), end(), moved.get());
        m_data = std::move(moved);
        m_capacity = capacity;
        m_shared.store(0, std::memory_order_relaxed);
    }

    std::shared_ptr<T[]> m_data;
    std::size_t m_size = 0;
    std::size_t m_capacity = 0;
    // How many of its elements the latest copy holds: those are never changed in place.
    mutable std::atomic<std::size_t> m_shared = 0;
};

} // namespace peaklens
