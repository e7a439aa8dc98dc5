// SPDX-License-Identifier: Apache-2.0
#include "memoryevents.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace peaklens {

MemoryEvents::Slots MemoryEvents::resizeUninitialized(std::size_t count)
{
    m_timeNs.resize(count);
    m_deltaBytes.resize(count);
    m_addr.resize(count);
    m_layerLane.resize(count);
    m_stackTags.resize(count);
    return {m_timeNs, m_deltaBytes, m_addr, m_layerLane, m_stackTags};
}

MemoryEvents::Slots MemoryEvents::appendUninitialized(std::size_t count)
{
    const std::size_t at = size();
    const Slots all = resizeUninitialized(at + count);
    return {all.timeNs.subspan(at), all.deltaBytes.subspan(at), all.addr.subspan(at), all.layerLane.subspan(at),
            all.stackTags.subspan(at)};
}

void MemoryEvents::reserve(std::size_t count)
{
    m_timeNs.reserve(count);
    m_deltaBytes.reserve(count);
    m_addr.reserve(count);
    m_layerLane.reserve(count);
    m_stackTags.reserve(count);
}

void MemoryEvents::append(const MemoryEvents &other, std::size_t begin, std::size_t end)
{
    const auto take = [begin, end](auto &to, const auto &from) { to.insert(to.end(), from.begin() + begin, from.begin() + end); };
    take(m_timeNs, other.m_timeNs);
    take(m_deltaBytes, other.m_deltaBytes);
    take(m_addr, other.m_addr);
    take(m_layerLane, other.m_layerLane);
    take(m_stackTags, other.m_stackTags);
}

void MemoryEvents::clear()
{
    *this = MemoryEvents();
}

bool MemoryEvents::isSortedByTime() const
{
    return std::is_sorted(m_timeNs.begin(), m_timeNs.end());
}

namespace {
template<typename Column>
void permute(Column &column, const std::vector<std::uint32_t> &order)
{
    Column sorted;
    sorted.reserve(column.size());
    for (auto i : order)
        sorted.push_back(column[i]);
    column.swap(sorted);
}
} // namespace

void MemoryEvents::sortByTime()
{
    if (isSortedByTime())
        return;
    std::vector<std::uint32_t> order(size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) { return m_timeNs[a] < m_timeNs[b]; });
    permute(m_timeNs, order);
    permute(m_deltaBytes, order);
    permute(m_addr, order);
    permute(m_layerLane, order);
    permute(m_stackTags, order);
}

} // namespace peaklens
