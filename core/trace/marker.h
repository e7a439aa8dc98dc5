// SPDX-License-Identifier: Apache-2.0
#pragma once
// A moment worth flagging on the timeline: an out-of-memory failure, or the point where
// a snapshot was taken.

#include <cstdint>
#include <optional>
#include <string_view>

namespace peaklens {

enum class MarkerKind : std::uint8_t { OutOfMemory = 0, Snapshot = 1 };
inline constexpr int kMarkerKindCount = 2;

std::string_view markerKindName(MarkerKind kind); // "oom", "snapshot"
std::optional<MarkerKind> parseMarkerKind(std::string_view name);

struct Marker
{
    std::int64_t timeNs = 0;
    std::uint32_t lane = 0;
    MarkerKind kind = MarkerKind::OutOfMemory;
    std::int64_t bytes = 0; // OOM: the size asked for; snapshot: bytes allocated then

    bool operator==(const Marker &) const = default;
};

} // namespace peaklens
