// SPDX-License-Identifier: Apache-2.0
#include "axisticks.h"

#include <algorithm>
#include <cmath>

namespace peaklens {

namespace {

// More would make an axis no one reads and a vector no one wants.
constexpr int kMaxTargetCount = 10000;

// A round step as mantissa x 10^exponent, kept apart so that ticks are computed as
// i * mantissa / 10^-exponent: 3 * 1 / 10 is 0.3, where 3 * 0.1 is 0.30000000000000004.
struct Step
{
    double mantissa = 0; // 1, 2 or 5 (or 10, which is 1 of the next power)
    int exponent = 0;

    double value() const { return mantissa * std::pow(10.0, exponent); }
    double tick(double index) const
    {
        return exponent >= 0 ? index * mantissa * std::pow(10.0, exponent) : index * mantissa / std::pow(10.0, -exponent);
    }
};

Step roundStep(double span, int targetCount)
{
    if (!(span > 0) || !std::isfinite(span))
        return {};
    const double raw = span / std::clamp(targetCount, 1, kMaxTargetCount);
    int exponent = static_cast<int>(std::floor(std::log10(raw)));
    const double fraction = raw / std::pow(10.0, exponent);
    // The nearest of 1, 2, 5, 10 on a logarithmic scale: the geometric means of neighbours
    // (1.41, 3.16, 7.07) are where one gives way to the next.
    double mantissa = 10;
    if (fraction < std::sqrt(2.0))
        mantissa = 1;
    else if (fraction < std::sqrt(10.0))
        mantissa = 2;
    else if (fraction < std::sqrt(50.0))
        mantissa = 5;
    if (mantissa == 10) {
        mantissa = 1;
        ++exponent;
    }
    return {mantissa, exponent};
}

} // namespace

double niceStep(double span, int targetCount)
{
    return roundStep(span, targetCount).value();
}

std::vector<double> niceTicks(double low, double high, int targetCount)
{
    if (!std::isfinite(low) || !std::isfinite(high))
        return {};
    if (high < low)
        std::swap(low, high);
    const Step step = roundStep(high - low, targetCount);
    if (step.mantissa == 0) // an empty span, or one too wide for a double
        return low == high ? std::vector<double>{low} : std::vector<double>{};
    // A bound a rounding error past a tick still counts as on it.
    const double value = step.value();
    constexpr double kSlack = 1e-9;
    const double first = std::floor(low / value + kSlack);
    const double last = std::ceil(high / value - kSlack);
    // Bounds so far from zero that a double cannot count the steps between them one by one.
    const double intervals = last - first;
    constexpr double kExactIntegers = 9007199254740992.0; // 2^53
    if (!(intervals <= 2.0 * kMaxTargetCount + 2) || std::max(std::abs(first), std::abs(last)) >= kExactIntegers)
        return {};
    std::vector<double> ticks;
    ticks.reserve(static_cast<std::size_t>(intervals) + 1);
    for (int i = 0; i <= static_cast<int>(intervals); ++i)
        ticks.push_back(step.tick(first + i));
    return ticks;
}

} // namespace peaklens
