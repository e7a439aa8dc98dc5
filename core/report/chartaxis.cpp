// SPDX-License-Identifier: Apache-2.0
#include "chartaxis.h"

#include "axisticks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace peaklens {

namespace {

struct Unit
{
    double size;
    std::string_view name;
};

constexpr std::array<Unit, 6> kByteUnits = {{{1.0, "B"},
                                             {1024.0, "KiB"},
                                             {1048576.0, "MiB"},
                                             {1073741824.0, "GiB"},
                                             {1099511627776.0, "TiB"},
                                             {1125899906842624.0, "PiB"}}};
// The names formatDuration uses, so the axis reads like the rest of the report.
constexpr std::array<Unit, 4> kTimeUnits = {{{1.0, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}}};

// The digits after the point that a step of 1, 2 or 5 x 10^k needs: none for k >= 0.
int decimalsFor(double step)
{
    if (!(step > 0))
        return 0;
    return std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
}

std::string label(double value, int decimals, std::string_view unit)
{
    if (value == 0)
        return "0";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return std::string(buffer) + " " + std::string(unit);
}

template<std::size_t N>
std::size_t unitFor(double value, const std::array<Unit, N> &units)
{
    std::size_t unit = 0;
    while (unit + 1 < N && std::fabs(value) >= units[unit + 1].size)
        ++unit;
    return unit;
}

// Ticks from 0 over [0, end], counted in `unit`; `endOnTick` moves the end to the first
// tick at or above it. Never a tick between two whole bytes or nanoseconds: a span of a
// few is ticked as if it were targetCount long.
ChartAxis axisIn(const Unit &unit, double end, int targetCount, bool endOnTick)
{
    ChartAxis axis;
    const double ticked = unit.size == 1 ? std::max(end, static_cast<double>(targetCount)) : end;
    const std::vector<double> ticks = niceTicks(0, ticked / unit.size, targetCount);
    const int decimals = decimalsFor(ticks.size() > 1 ? ticks[1] - ticks[0] : 0);
    for (const double tick : ticks) {
        if (!endOnTick && tick * unit.size > end * (1 + 1e-9))
            break;
        axis.ticks.push_back(tick * unit.size);
        axis.labels.push_back(label(tick, decimals, unit.name));
    }
    axis.end = endOnTick && !axis.ticks.empty() ? axis.ticks.back() : end;
    return axis;
}

} // namespace

ChartAxis bytesAxis(double maxBytes, int targetCount)
{
    const double top = std::isfinite(maxBytes) ? std::max(1.0, maxBytes) : 1.0;
    std::size_t unit = unitFor(top, kByteUnits);
    ChartAxis axis = axisIn(kByteUnits[unit], top, targetCount, true);
    // 1023 MiB rounds up to 1200 MiB; the next unit reads better: 0, 0.2, ... 1 GiB.
    if (unit + 1 < kByteUnits.size() && axis.end >= kByteUnits[unit + 1].size)
        axis = axisIn(kByteUnits[unit + 1], top, targetCount, true);
    return axis;
}

ChartAxis timeAxis(double spanNs, int targetCount)
{
    const double span = std::isfinite(spanNs) ? std::max(1.0, spanNs) : 1.0;
    return axisIn(kTimeUnits[unitFor(span, kTimeUnits)], span, targetCount, false);
}

} // namespace peaklens
