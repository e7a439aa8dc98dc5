// SPDX-License-Identifier: Apache-2.0
#include "kernellanes.h"

#include <algorithm>
#include <map>

namespace peaklens {

KernelLanes::KernelLanes(const Trace &trace, Device device)
{
    std::map<std::uint64_t, StreamKernels> byStream;
    for (std::size_t k = 0; k < trace.kernels.size(); ++k) {
        const Kernel &kernel = trace.kernels[k];
        if (kernel.lane >= trace.lanes.size() || trace.lanes[kernel.lane].device != device)
            continue;
        StreamKernels &lane = byStream[trace.lanes[kernel.lane].stream];
        lane.kernels.push_back(k);
    }
    for (auto &[stream, lane] : byStream) {
        lane.stream = stream;
        // trace.kernels is sorted by begin time; a stable sort keeps that promise checked.
        std::stable_sort(lane.kernels.begin(), lane.kernels.end(),
                         [&](std::size_t a, std::size_t b) { return trace.kernels[a].beginNs < trace.kernels[b].beginNs; });
        std::int64_t latest = INT64_MIN;
        for (std::size_t k : lane.kernels) {
            const Kernel &kernel = trace.kernels[k];
            const std::int64_t end = std::max(kernel.beginNs, kernel.endNs);
            lane.beginNs.push_back(kernel.beginNs);
            lane.endNs.push_back(end);
            latest = std::max(latest, end);
            lane.endsBy.push_back(latest);
        }
        m_lanes.push_back(std::move(lane));
    }
}

std::vector<float> KernelLanes::busy(std::size_t laneIndex, std::int64_t beginNs, std::int64_t endNs, int columns) const
{
    std::vector<float> share(static_cast<std::size_t>(std::max(columns, 0)), 0.0f);
    if (columns <= 0 || endNs <= beginNs)
        return share;
    const StreamKernels &lane = m_lanes[laneIndex];
    const double width = static_cast<double>(endNs - beginNs) / columns;
    // The first kernel that may still run at beginNs: none before it ends after beginNs.
    auto first = std::upper_bound(lane.endsBy.begin(), lane.endsBy.end(), beginNs) - lane.endsBy.begin();
    std::int64_t covered = beginNs; // time before this is counted already
    for (auto k = static_cast<std::size_t>(first); k < lane.beginNs.size() && lane.beginNs[k] < endNs; ++k) {
        const std::int64_t from = std::max(lane.beginNs[k], covered);
        const std::int64_t to = std::min(lane.endNs[k], endNs);
        if (to <= from)
            continue;
        covered = to;
        // Spread [from, to) over the columns it crosses.
        double at = static_cast<double>(from - beginNs);
        const double stop = static_cast<double>(to - beginNs);
        for (auto column = std::min(static_cast<std::size_t>(at / width), share.size() - 1);; ++column) {
            const bool last = column + 1 == share.size();
            const double columnEnd = last ? stop : std::min(stop, static_cast<double>(column + 1) * width);
            if (columnEnd > at)
                share[column] += static_cast<float>((columnEnd - at) / width);
            at = std::max(at, columnEnd);
            if (at >= stop || last)
                break;
        }
    }
    for (float &value : share)
        value = std::min(value, 1.0f);
    return share;
}

std::optional<std::size_t> KernelLanes::kernelAt(std::size_t laneIndex, std::int64_t timeNs) const
{
    const StreamKernels &lane = m_lanes[laneIndex];
    // Kernels begun by timeNs, latest first, back to the first whose run could reach it.
    auto k = std::upper_bound(lane.beginNs.begin(), lane.beginNs.end(), timeNs) - lane.beginNs.begin();
    const auto first = std::upper_bound(lane.endsBy.begin(), lane.endsBy.end(), timeNs) - lane.endsBy.begin();
    for (--k; k >= first; --k) {
        if (lane.endNs[static_cast<std::size_t>(k)] > timeNs)
            return lane.kernels[static_cast<std::size_t>(k)];
    }
    return std::nullopt;
}

} // namespace peaklens
