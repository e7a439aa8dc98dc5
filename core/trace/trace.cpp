// SPDX-License-Identifier: Apache-2.0
#include "trace.h"

#include <algorithm>
#include <set>

namespace peaklens {

std::string Trace::metaValue(std::string_view key) const
{
    auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
}

std::vector<Device> Trace::devices() const
{
    std::vector<bool> used(lanes.size(), false);
    for (std::size_t i = 0; i < events.size(); ++i)
        used[events.lane(i)] = true;
    for (const ReservedEvent &event : reserved)
        used[event.lane] = true;
    std::set<Device> devices;
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        if (used[lane])
            devices.insert(lanes[lane].device);
    }
    return {devices.begin(), devices.end()};
}

std::optional<std::size_t> Trace::stepAt(std::int64_t timeNs) const
{
    auto after =
        std::upper_bound(steps.begin(), steps.end(), timeNs, [](std::int64_t t, const Step &step) { return t < step.beginNs; });
    if (after == steps.begin())
        return std::nullopt;
    const auto index = static_cast<std::size_t>(after - steps.begin() - 1);
    return steps[index].contains(timeNs) ? std::optional(index) : std::nullopt;
}

std::optional<std::uint32_t> Trace::findLayer(std::string_view path) const
{
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (layers[i].path == path)
            return static_cast<std::uint32_t>(i);
    }
    return std::nullopt;
}

bool Trace::isWithin(std::uint32_t layer, std::uint32_t ancestor) const
{
    while (layer < layers.size()) {
        if (layer == ancestor)
            return true;
        layer = layers[layer].parent;
    }
    return false;
}

} // namespace peaklens
