// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GPU activity of a Kineto trace: kernels, memory copies and memsets, each on the lane
// of its device and stream, on the clock of the memory events. ROCm traces number their
// GPUs as HSA agents, the CPUs first; their kernels are moved onto the GPUs that the
// memory events name, so that a device's kernels and memory sit together.

#include "core/trace/tracebuilder.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace peaklens {

class KinetoKernels
{
public:
    // "kernel", "gpu_memcpy", "gpu_memset"; "Kernel", "Memcpy", "Memset" in 2021 traces.
    static bool isGpuActivity(std::string_view category);
    // A GPU row's thread names its stream: 7, or "stream 7" in 2021 traces.
    static std::optional<std::uint64_t> streamOfThread(std::string_view thread);

    // Times relative to the trace's base time; device and stream as the trace numbers
    // them, absent when the event names none.
    void add(TraceBuilder &builder, std::string_view name, std::int64_t beginNs, std::int64_t endNs,
             std::optional<std::int64_t> device, std::optional<std::int64_t> stream);
    // A GPU that memory events are on ("Device Id" of CUDA and HIP events).
    void noteMemoryDevice(std::int64_t index) { m_memoryDevices.insert(index); }
    // Adds the kernels to `builder` in time order, `baseNs` later; says in the metadata
    // what was skipped and how ROCm agents were renumbered. `rocm`: the trace is from AMD GPUs.
    void finish(TraceBuilder &builder, std::int64_t baseNs, bool rocm);

    std::size_t size() const { return m_records.size(); }

private:
    struct Record
    {
        std::int64_t beginNs;
        std::int64_t endNs;
        std::int64_t device;
        std::uint64_t stream;
        std::uint32_t name;
    };
    struct NameHash
    {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
    };

    std::uint32_t nameId(TraceBuilder &builder, std::string_view name);
    std::string describe(std::int64_t agentOffset) const;

    std::vector<Record> m_records;
    std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> m_names;
    std::set<std::int64_t> m_memoryDevices;
    std::size_t m_charged = 0;
    std::int64_t m_negativeDuration = 0;
    std::int64_t m_noDevice = 0;
    std::int64_t m_noStream = 0;
};

} // namespace peaklens
