// SPDX-License-Identifier: Apache-2.0
#pragma once
// What each CUDA device a process sees can hold, asked of the NVIDIA driver already loaded
// in the process (libcuda.so.1 through dlopen without loading it): a recording names the
// device's capacity without linking the driver, which comes with the GPU and not with a
// package. Empty when the driver is not loaded or has no device.

#include <cstdint>
#include <optional>
#include <vector>

namespace peaklens::record {

// By device ordinal; nullopt where the driver could not tell.
std::vector<std::optional<std::int64_t>> driverDeviceTotals();

} // namespace peaklens::record
