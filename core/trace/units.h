// SPDX-License-Identifier: Apache-2.0
#pragma once
// Human units: bytes in KiB/MiB/GiB, durations in ns/us/ms/s, both ways.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peaklens {

// "512 B", "1.50 KiB", "2.00 GiB"; negative values keep their sign.
std::string formatBytes(std::int64_t bytes);
// "28,011": a count with thousands separated.
std::string formatCount(std::int64_t count);
// "750 ns", "12.3 us", "4.56 ms", "1.234 s".
std::string formatDuration(std::int64_t ns);

// "4096", "4KiB", "1.5 GiB", "6GB" (decimal units are 1000-based). Nullopt when not a size.
std::optional<std::int64_t> parseBytes(std::string_view text);
// "250", "250ns", "1.5us", "2ms", "3s" (bare numbers are ns). Nullopt when not a duration.
std::optional<std::int64_t> parseDuration(std::string_view text);

} // namespace peaklens
