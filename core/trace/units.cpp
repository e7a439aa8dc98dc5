// SPDX-License-Identifier: Apache-2.0
#include "units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace peaklens {

namespace {

struct Unit
{
    std::string_view suffix;
    double scale;
};

std::string formatScaled(double value, std::string_view unit)
{
    char buffer[64];
    const double magnitude = std::fabs(value);
    const int decimals = magnitude >= 100 ? 1 : magnitude >= 10 ? 2 : 3;
    std::snprintf(buffer, sizeof buffer, "%.*f %.*s", decimals, value, static_cast<int>(unit.size()), unit.data());
    return buffer;
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ')
        text.remove_suffix(1);
    return text;
}

// A number followed by one of the units; the empty suffix is one of them.
template<std::size_t N>
std::optional<std::int64_t> parseWithUnits(std::string_view text, const std::array<Unit, N> &units)
{
    text = trimmed(text);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || !std::isfinite(value))
        return std::nullopt;
    const std::string_view suffix = trimmed(std::string_view(end, text.data() + text.size() - end));
    for (const Unit &unit : units) {
        if (suffix != unit.suffix)
            continue;
        const double scaled = std::round(value * unit.scale);
        if (std::fabs(scaled) >= 9.2e18)
            return std::nullopt;
        return static_cast<std::int64_t>(scaled);
    }
    return std::nullopt;
}

constexpr std::array<Unit, 13> kByteUnits = {{
    {"", 1.0},
    {"B", 1.0},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"K", 1024.0},
    {"M", 1048576.0},
    {"G", 1073741824.0},
}};

constexpr std::array<Unit, 6> kDurationUnits = {{
    {"", 1.0},
    {"ns", 1.0},
    {"us", 1e3},
    {"ms", 1e6},
    {"s", 1e9},
    {"min", 60e9},
}};

} // namespace

std::string formatBytes(std::int64_t bytes)
{
    const double value = static_cast<double>(bytes);
    const double magnitude = std::fabs(value);
    if (magnitude < 1024)
        return std::to_string(bytes) + " B";
    static constexpr std::array<std::string_view, 5> names = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double scaled = value / 1024;
    std::size_t unit = 0;
    while (std::fabs(scaled) >= 1024 && unit + 1 < names.size()) {
        scaled /= 1024;
        ++unit;
    }
    return formatScaled(scaled, names[unit]);
}

std::string formatCount(std::int64_t count)
{
    std::string digits = std::to_string(count < 0 ? -count : count);
    for (int pos = static_cast<int>(digits.size()) - 3; pos > 0; pos -= 3)
        digits.insert(static_cast<std::size_t>(pos), ",");
    return count < 0 ? "-" + digits : digits;
}

std::string formatDuration(std::int64_t ns)
{
    const double value = static_cast<double>(ns);
    const double magnitude = std::fabs(value);
    if (magnitude < 1e3)
        return std::to_string(ns) + " ns";
    if (magnitude < 1e6)
        return formatScaled(value / 1e3, "us");
    if (magnitude < 1e9)
        return formatScaled(value / 1e6, "ms");
    return formatScaled(value / 1e9, "s");
}

std::optional<std::int64_t> parseBytes(std::string_view text)
{
    return parseWithUnits(text, kByteUnits);
}

std::optional<std::int64_t> parseDuration(std::string_view text)
{
    return parseWithUnits(text, kDurationUnits);
}

} // namespace peaklens
