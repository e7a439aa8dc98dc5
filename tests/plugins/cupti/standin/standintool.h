// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the stand-ins talk to each other. The real driver and libcupti speak through a
// private export table; here the libcuda.so.1 stand-in keeps a pointer to the tool the
// libcupti stand-in registers, and the libcudart stand-in reports through the same one.
// Test-only code: none of it is built into PeakLens.

#include <cstdint>

extern "C" {

struct PeaklensStandinTool
{
    // An API call begins on the calling thread; returns its correlation id.
    // `runtime` is 1 for a runtime (cuda*) call, 0 for a driver (cu*) call.
    std::uint32_t (*apiEnter)(int runtime, std::uint32_t cbid);
    // The innermost API call of the calling thread returns.
    void (*apiExit)(int result);
    // Device memory made or released inside the calling thread's outermost open API call.
    void (*memory)(int allocation, std::uint64_t address, std::uint64_t bytes, std::uint32_t stream, int fromPool);
    // A kernel queued on `stream` inside the calling thread's outermost open API call; it
    // runs for `durationNs` once the stream reaches it.
    void (*kernel)(const char *name, std::uint32_t stream, std::uint64_t durationNs);
};

// Exported by the libcuda.so.1 stand-in.
void peaklensStandinSetTool(const PeaklensStandinTool *tool);
const PeaklensStandinTool *peaklensStandinTool(void);
}
