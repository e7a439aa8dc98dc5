// SPDX-License-Identifier: Apache-2.0
#include "memo.h"

#include "core/trace/loadbudget.h"

#include <algorithm>

namespace peaklens::pickle {

namespace {
constexpr std::size_t kFirstRoom = 1024;
} // namespace

bool Memo::makeSlot(std::uint64_t index)
{
    if (m_values.size() >= kMoved || index >= kReleased)
        return false;
    if (index >= m_codes.capacity()) {
        const std::size_t room = std::max<std::size_t>({kFirstRoom, 2 * m_codes.capacity(), index + 1});
        LoadBudget::charge((room - m_codes.capacity()) * sizeof(std::uint32_t), "the pickle's memo");
        m_codes.reserve(room);
    }
    if (index >= m_codes.size())
        m_codes.resize(index + 1, kUnset);
    return true;
}

void Memo::growPool()
{
    const std::size_t room = std::max<std::size_t>(kFirstRoom, 2 * m_values.capacity());
    LoadBudget::charge((room - m_values.capacity()) * sizeof(Value), "the pickle's memo");
    m_values.reserve(room);
}

} // namespace peaklens::pickle
