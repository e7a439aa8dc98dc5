// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU kernel execution, for the GPU-busy part of a step's time.

#include <cstdint>

namespace peaklens {

struct Kernel
{
    std::uint32_t name = 0; // index into Trace::kernelNames
    std::uint32_t lane = 0;
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;

    bool operator==(const Kernel &) const = default;
};

} // namespace peaklens
