// SPDX-License-Identifier: Apache-2.0
#pragma once
// A memory device, and a lane: one stream of one device, in one memory pool of its
// allocator. Events refer to lanes by index.

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

// A memory pool of the CUDA caching allocator, as a snapshot's segment_pool_id names it:
// (0, 0) its default pool, (N, 0) a CUDA graph's private pool, (0, N) a torch.cuda.MemPool.
struct MemoryPool
{
    std::int64_t graph = 0;
    std::int64_t user = 0;

    auto operator<=>(const MemoryPool &) const = default; // NOLINT(modernize-use-nullptr): as above
    bool isDefault() const { return graph == 0 && user == 0; }
    // "default", "graph pool 1", "MemPool 2", "pool (3, 4)".
    std::string toString() const;
};

struct Lane
{
    Device device;
    std::uint64_t stream = 0;
    MemoryPool pool;

    auto operator<=>(const Lane &) const = default; // NOLINT(modernize-use-nullptr): as above
};

} // namespace peaklens
