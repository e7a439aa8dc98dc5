// SPDX-License-Identifier: Apache-2.0
// A libcudart stand-in: the runtime's allocation calls, each a runtime API call around the
// driver call that does the work, as in the real runtime (which also starts the driver on
// first use). CUPTI then sees a runtime record and a nested driver record, and the memory
// record carries the runtime call's correlation id.

#include "standintool.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_runtime_cbid.h>

#include <mutex>

namespace {

cudaError_t runtimeError(CUresult result)
{
    switch (result) {
    case CUDA_SUCCESS:
        return cudaSuccess;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return cudaErrorMemoryAllocation;
    default:
        return cudaErrorInvalidValue;
    }
}

template<typename DriverCall>
cudaError_t runtimeCall(std::uint32_t cbid, DriverCall &&driverCall)
{
    static std::once_flag started;
    std::call_once(started, [] { cuInit(0); });
    const PeaklensStandinTool *tool = peaklensStandinTool();
    if (tool)
        tool->apiEnter(1, cbid);
    const cudaError_t result = runtimeError(driverCall());
    if (tool)
        tool->apiExit(result);
    return result;
}

CUdeviceptr devicePointer(void *pointer)
{
    return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(pointer));
}

} // namespace

extern "C" {

cudaError_t cudaMalloc(void **pointer, size_t bytes)
{
    return runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, [&] {
        CUdeviceptr address = 0;
        const CUresult result = cuMemAlloc(&address, bytes);
        *pointer = reinterpret_cast<void *>(address);
        return result;
    });
}

cudaError_t cudaFree(void *pointer)
{
    return runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, [&] { return cuMemFree(devicePointer(pointer)); });
}

cudaError_t cudaMallocAsync(void **pointer, size_t bytes, cudaStream_t stream)
{
    return runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, [&] {
        CUdeviceptr address = 0;
        const CUresult result = cuMemAllocAsync(&address, bytes, stream);
        *pointer = reinterpret_cast<void *>(address);
        return result;
    });
}

cudaError_t cudaFreeAsync(void *pointer, cudaStream_t stream)
{
    return runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
                       [&] { return cuMemFreeAsync(devicePointer(pointer), stream); });
}

} // extern "C"
