// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a recording backend hands the recording session, as plain values: CUPTI's activity
// records decoded (plugins/cupti) and PyTorch's allocator reports (plugins/torch). Times
// are the backend's clock in nanoseconds.

#include "core/trace/device.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace peaklens::record {

// A memory allocation or release: from CUPTI (MEMORY2: cudaMalloc/cudaFree, the async
// variants and cuMem*), tied to the API call that made it by its correlation id; or a
// tensor's block from PyTorch's allocator, reported on the thread that asked for it.
struct MemoryRecord
{
    bool allocation = true;
    std::uint64_t address = 0;
    std::int64_t bytes = 0;
    std::int64_t timeNs = 0;
    std::uint32_t device = 0;
    std::uint32_t stream = 0;
    std::uint32_t correlation = 0;
    bool fromPool = false; // carved from a memory pool (cudaMallocAsync)
    DeviceType deviceType = DeviceType::Cuda;
    std::optional<std::uint32_t> thread; // known when reported on the allocating thread
    // The operator that asked for the block and the autograd node running it, where the
    // backend knows them (the torch backend: "aten::addmm", "MmBackward0"). The text must
    // outlive the recording: the backend interns it.
    std::string_view op;
    std::string_view node;
};

// A memory pool created, trimmed or destroyed, or the memory a caching allocator holds
// on a device changed; `bytes` is its size afterwards.
struct PoolRecord
{
    std::uint64_t address = 0;
    std::int64_t bytes = 0;
    std::int64_t timeNs = 0;
    std::uint32_t device = 0;
};

struct KernelRecord
{
    std::string name;
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;
    std::uint32_t device = 0;
    std::uint32_t stream = 0;
    std::uint32_t correlation = 0;
};

// A runtime or driver API call: which thread made the call with this correlation id.
struct ApiRecord
{
    std::uint32_t correlation = 0;
    std::uint32_t thread = 0;
    std::int64_t beginNs = 0;
    std::int64_t endNs = 0;
};

// An NVTX marker: the start or end of a range (paired by id) or an instant.
struct MarkerRecord
{
    enum class Kind : std::uint8_t { Start, End, Instant };
    Kind kind = Kind::Instant;
    std::uint32_t id = 0;
    std::string name; // empty for an end
    std::uint32_t thread = 0;
    std::int64_t timeNs = 0;
};

using ActivityRecord = std::variant<MemoryRecord, PoolRecord, KernelRecord, ApiRecord, MarkerRecord>;

} // namespace peaklens::record
