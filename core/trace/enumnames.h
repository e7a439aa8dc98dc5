// SPDX-License-Identifier: Apache-2.0
#pragma once
// Names of small enums, both ways, from one table per enum.

#include <array>
#include <optional>
#include <string_view>

namespace peaklens {

template<typename Enum, std::size_t N>
std::optional<Enum> enumFromName(const std::array<std::string_view, N> &names, std::string_view name)
{
    for (std::size_t i = 0; i < N; ++i) {
        if (names[i] == name)
            return static_cast<Enum>(i);
    }
    return std::nullopt;
}

} // namespace peaklens
