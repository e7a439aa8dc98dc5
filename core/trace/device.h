// SPDX-License-Identifier: Apache-2.0
#pragma once
// A memory device, and a lane: one stream of one device. Events refer to lanes by index.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peaklens {

// Codes as in Kineto's "Device Type": 0 = CPU, 1 = CUDA.
enum class DeviceType : std::uint8_t { Cpu = 0, Cuda = 1 };

struct Device
{
    DeviceType type = DeviceType::Cuda;
    std::int16_t index = 0;

    auto operator<=>(const Device &) const = default; // NOLINT(modernize-use-nullptr): a false positive on `= default`
    std::string toString() const;                     // "cuda:0", "cpu"
    static std::optional<Device> parse(std::string_view text);
};

struct Lane
{
    Device device;
    std::uint64_t stream = 0;

    auto operator<=>(const Lane &) const = default; // NOLINT(modernize-use-nullptr): as above
};

} // namespace peaklens
