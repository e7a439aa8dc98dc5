// SPDX-License-Identifier: Apache-2.0
#pragma once
// The median of a few measured values, and their spread as the median absolute deviation:
// the robust figures every timing in PeakLens is summarised with (one warm-up step ten
// times the others leaves both alone).

#include <algorithm>
#include <cstdlib>
#include <type_traits>
#include <vector>

namespace peaklens {

// The middle value, or the mean of the two middle ones; 0 for no values.
template<typename T>
T median(std::vector<T> values)
{
    if (values.empty())
        return T{};
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    if (n % 2)
        return values[n / 2];
    const T low = values[n / 2 - 1], high = values[n / 2];
    if constexpr (std::is_integral_v<T>)
        return low + (high - low) / 2; // cannot overflow
    else
        return (low + high) / 2;
}

// The median absolute deviation of `values` from `center`.
template<typename T>
T medianDeviation(const std::vector<T> &values, T center)
{
    std::vector<T> deviations;
    deviations.reserve(values.size());
    for (const T value : values)
        deviations.push_back(value > center ? value - center : center - value);
    return median(std::move(deviations));
}

} // namespace peaklens
