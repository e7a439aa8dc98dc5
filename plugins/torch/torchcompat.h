// SPDX-License-Identifier: Apache-2.0
#pragma once
// What differs between the LibTorch versions peaklens-replay builds against: Debian's 1.13
// and the 2.x inside a pip PyTorch. Every version check of the replay engine lives here.

#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#ifdef PEAKLENS_REPLAY_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <cstdint>
#include <string>

#define PEAKLENS_TORCH_AT_LEAST(major, minor)                                                                                    \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// LibTorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if PEAKLENS_TORCH_AT_LEAST(2, 3)
#define PEAKLENS_ALLOCATE_CONST
#define PEAKLENS_ALLOCATOR_HAS_COPY_DATA 1
#else
#define PEAKLENS_ALLOCATE_CONST const
#define PEAKLENS_ALLOCATOR_HAS_COPY_DATA 0
#endif

namespace peaklens::replay::compat {

// "2.15.0": the LibTorch this was built against.
inline std::string libtorchVersion()
{
    return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "."
           + std::to_string(TORCH_VERSION_PATCH);
}

// The totals of MemoryReportingInfoBase::reportMemoryUsage were int64_t in 1.13 and are
// size_t in 2.x; taken from the base class, so an override matches whichever it is.
template<typename>
struct ReportArguments;
template<typename Class, typename Pointer, typename Size, typename Total, typename Device>
struct ReportArguments<void (Class::*)(Pointer, Size, Total, Total, Device)>
{
    using TotalType = Total;
};
using ReportedTotal = ReportArguments<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::TotalType;

// Autocast state per device type. LibTorch 2.4 folded is_cpu_enabled/is_enabled and
// get_autocast_cpu_dtype/get_autocast_gpu_dtype into functions taking the device type
// (the old names are deprecated there). Only CPU and CUDA are asked for.
inline bool autocastEnabled(c10::DeviceType device)
{
#if PEAKLENS_TORCH_AT_LEAST(2, 4)
    return at::autocast::is_autocast_enabled(device);
#else
    return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

inline void setAutocastEnabled(c10::DeviceType device, bool enabled)
{
#if PEAKLENS_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(device, enabled);
#else
    if (device == c10::DeviceType::CPU)
        at::autocast::set_cpu_enabled(enabled);
    else
        at::autocast::set_enabled(enabled);
#endif
}

inline c10::ScalarType autocastDtype(c10::DeviceType device)
{
#if PEAKLENS_TORCH_AT_LEAST(2, 4)
    return at::autocast::get_autocast_dtype(device);
#else
    return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void setAutocastDtype(c10::DeviceType device, c10::ScalarType dtype)
{
#if PEAKLENS_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_dtype(device, dtype);
#else
    if (device == c10::DeviceType::CPU)
        at::autocast::set_autocast_cpu_dtype(dtype);
    else
        at::autocast::set_autocast_gpu_dtype(dtype);
#endif
}

#ifdef PEAKLENS_REPLAY_CUDA
// The caching allocator's statistics: 1.13 takes an int device and returns its own
// DeviceStats; 2.x takes a c10::DeviceIndex and (2.6 at least) returns the shared
// c10::CachingDeviceAllocator::DeviceStats. In both allocated_bytes[0] is the aggregate
// over the small and large pools.
inline std::int64_t cudaPeakAllocatedBytes(c10::DeviceIndex device)
{
    return c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[0].peak;
}

inline void resetCudaPeakStats(c10::DeviceIndex device)
{
    c10::cuda::CUDACachingAllocator::resetPeakStats(device);
}
#endif

} // namespace peaklens::replay::compat
