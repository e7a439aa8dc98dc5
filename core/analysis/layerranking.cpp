#include "layerranking.h"

#include <algorithm>

namespace peaklens {

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
        return trace.layers[a].path < trace.layers[b].path;
    });
    return order;
}

} // namespace peaklens
