// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernels of one device by stream, for lanes drawn under the memory timeline on the
// same clock: how busy each stream is per pixel column, and which kernel runs at a moment.

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

class KernelLanes
{
public:
    KernelLanes(const Trace &trace, Device device);

    // Streams of the device that ran kernels, by stream number.
    std::size_t size() const { return m_lanes.size(); }
    bool empty() const { return m_lanes.empty(); }
    std::uint64_t stream(std::size_t lane) const { return m_lanes[lane].stream; }
    std::size_t kernelCount(std::size_t lane) const { return m_lanes[lane].kernels.size(); }

    // The share of each of `columns` equal columns over [beginNs, endNs) during which some
    // kernel ran on the lane, 0 to 1. Kernels that overlap on a stream count once.
    std::vector<float> busy(std::size_t lane, std::int64_t beginNs, std::int64_t endNs, int columns) const;
    // The kernel running on the lane at the time (the latest begun, when several overlap),
    // as an index into trace.kernels.
    std::optional<std::size_t> kernelAt(std::size_t lane, std::int64_t timeNs) const;

private:
    struct StreamKernels
    {
        std::uint64_t stream = 0;
        std::vector<std::size_t> kernels;  // into trace.kernels, by begin time
        std::vector<std::int64_t> beginNs; // theirs, for searching
        std::vector<std::int64_t> endNs;
        std::vector<std::int64_t> endsBy; // the latest end among the kernels up to each
    };
    std::vector<StreamKernels> m_lanes;
};

} // namespace peaklens
