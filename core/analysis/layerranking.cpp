// SPDX-License-Identifier: Apache-2.0
#include "layerranking.h"

#include <algorithm>

namespace peaklens {

bool naturalLess(std::string_view a, std::string_view b)
{
    std::size_t i = 0, j = 0;
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t endA = i, endB = j;
            while (endA < a.size() && digit(a[endA]))
                ++endA;
            while (endB < b.size() && digit(b[endB]))
                ++endB;
            // Numbers compare by value: leading zeros aside, the longer is larger.
            const std::string_view x = a.substr(i, endA - i), y = b.substr(j, endB - j);
            const std::string_view tx = x.substr(std::min(x.find_first_not_of('0'), x.size()));
            const std::string_view ty = y.substr(std::min(y.find_first_not_of('0'), y.size()));
            if (tx.size() != ty.size())
                return tx.size() < ty.size();
            if (tx != ty)
                return tx < ty;
            i = endA;
            j = endB;
            continue;
        }
        if (a[i] != b[j])
            return a[i] < b[j];
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

std::vector<std::size_t> rankLayersByActivation(const Trace &trace, const std::vector<LayerStats> &stats)
{
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < stats.size(); ++i) {
        if (stats[i].activationBytes > 0 || stats[i].forwardCalls > 0 || stats[i].backwardCalls > 0)
            order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (stats[a].activationBytes != stats[b].activationBytes)
            return stats[a].activationBytes > stats[b].activationBytes;
        return naturalLess(trace.layers[a].path, trace.layers[b].path);
    });
    return order;
}

} // namespace peaklens
