// SPDX-License-Identifier: Apache-2.0
#include "core/record/drivermemory.h"

#include <dlfcn.h>

#include <cstddef>

namespace peaklens::record {

namespace {

// The driver API's entry points, by their C signatures (CUresult and CUdevice are ints).
using GetCount = int (*)(int *);
using GetDevice = int (*)(int *, int);
using TotalMemory = int (*)(std::size_t *, int);

template<typename Function>
Function driverFunction(const char *name)
{
    static void *const driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return driver ? reinterpret_cast<Function>(::dlsym(driver, name)) : nullptr;
}

} // namespace

std::vector<std::optional<std::int64_t>> driverDeviceTotals()
{
    const auto getCount = driverFunction<GetCount>("cuDeviceGetCount");
    const auto getDevice = driverFunction<GetDevice>("cuDeviceGet");
    const auto totalMemory = driverFunction<TotalMemory>("cuDeviceTotalMem_v2");
    int count = 0;
    if (!getCount || !getDevice || !totalMemory || getCount(&count) != 0 || count <= 0)
        return {};
    std::vector<std::optional<std::int64_t>> totals(static_cast<std::size_t>(count));
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        int device = 0;
        std::size_t bytes = 0;
        if (getDevice(&device, ordinal) == 0 && totalMemory(&bytes, device) == 0 && bytes > 0)
            totals[static_cast<std::size_t>(ordinal)] = static_cast<std::int64_t>(bytes);
    }
    return totals;
}

} // namespace peaklens::record
