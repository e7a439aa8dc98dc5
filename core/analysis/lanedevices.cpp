// SPDX-License-Identifier: Apache-2.0
#include "lanedevices.h"

#include <algorithm>

namespace peaklens {

LaneDevices::LaneDevices(const Trace &trace)
{
    for (const Lane &lane : trace.lanes) {
        auto index = indexOf(lane.device);
        if (!index) {
            index = static_cast<std::uint32_t>(devices.size());
            devices.push_back(lane.device);
        }
        deviceOfLane.push_back(*index);
    }
}

std::optional<std::uint32_t> LaneDevices::indexOf(Device device) const
{
    auto it = std::find(devices.begin(), devices.end(), device);
    if (it == devices.end())
        return std::nullopt;
    return static_cast<std::uint32_t>(it - devices.begin());
}

} // namespace peaklens
