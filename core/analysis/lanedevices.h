// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which device each lane (device stream) of a trace belongs to, as small indices, so the
// analyses keep one running sum per device.

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens {

struct LaneDevices
{
    std::vector<Device> devices;             // in order of first use by a lane
    std::vector<std::uint32_t> deviceOfLane; // index into devices, per lane

    explicit LaneDevices(const Trace &trace);
    std::optional<std::uint32_t> indexOf(Device device) const;
};

} // namespace peaklens
