// SPDX-License-Identifier: Apache-2.0
#include "device.h"

#include <charconv>

namespace peaklens {

std::string Device::toString() const
{
    if (type == DeviceType::Cpu)
        return index == 0 ? std::string("cpu") : "cpu:" + std::to_string(index);
    return "cuda:" + std::to_string(index);
}

std::optional<Device> Device::parse(std::string_view text)
{
    Device device;
    std::string_view rest;
    if (text.starts_with("cpu")) {
        device.type = DeviceType::Cpu;
        rest = text.substr(3);
    } else if (text.starts_with("cuda")) {
        device.type = DeviceType::Cuda;
        rest = text.substr(4);
    } else {
        return std::nullopt;
    }
    if (rest.empty())
        return device;
    if (rest.front() != ':')
        return std::nullopt;
    rest.remove_prefix(1);
    int index = -1;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec != std::errc() || end != rest.data() + rest.size() || index < 0 || index > INT16_MAX)
        return std::nullopt;
    device.index = static_cast<std::int16_t>(index);
    return device;
}

std::string MemoryPool::toString() const
{
    if (isDefault())
        return "default";
    if (user == 0)
        return "graph pool " + std::to_string(graph);
    if (graph == 0)
        return "MemPool " + std::to_string(user);
    return "pool (" + std::to_string(graph) + ", " + std::to_string(user) + ")";
}

} // namespace peaklens
