// SPDX-License-Identifier: Apache-2.0
// A libcuda.so.1 stand-in: what the NVIDIA driver does for an injected tool, on a machine
// without a GPU. cuInit loads the library CUDA_INJECTION64_PATH names and calls its
// InitializeInjection once, as the driver does. Memory calls hand out addresses of a
// pretend device (PEAKLENS_STANDIN_DEVICES devices, default 1, of 80 GiB each); a kernel
// "runs" for one microsecond per block of its grid's x dimension. Every call is reported
// to the tool the libcupti stand-in registers, which turns it into CUPTI records.

#include "standintool.h"

#include <cuda.h>
#include <cupti_driver_cbid.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace {

constexpr std::size_t kDeviceBytes = std::size_t(80) << 30;
constexpr std::uint32_t kDefaultStream = 7; // CUPTI's id of the legacy default stream

std::atomic<const PeaklensStandinTool *> g_tool{nullptr};

struct Device
{
    std::mutex mutex;
    std::unordered_map<CUdeviceptr, std::size_t> blocks;
    CUdeviceptr next = 0x7f2000000000;
    std::size_t used = 0;
    std::uintptr_t nextStream = 13;
};

Device &device()
{
    static Device *instance = new Device; // never destroyed: calls may come during exit
    return *instance;
}

int deviceCount()
{
    const char *count = std::getenv("PEAKLENS_STANDIN_DEVICES");
    return count && *count ? std::atoi(count) : 1;
}

std::uint32_t streamId(CUstream stream)
{
    return stream ? static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(stream)) : kDefaultStream;
}

// One driver API call, reported to the tool from entry to return.
class ApiCall
{
public:
    explicit ApiCall(std::uint32_t cbid)
        : m_tool(g_tool.load())
    {
        if (m_tool)
            m_tool->apiEnter(0, cbid);
    }
    ~ApiCall()
    {
        if (m_tool)
            m_tool->apiExit(m_result);
    }
    ApiCall(const ApiCall &) = delete;
    ApiCall &operator=(const ApiCall &) = delete;

    CUresult result(CUresult result)
    {
        m_result = result;
        return result;
    }
    const PeaklensStandinTool *tool() const { return m_tool; }

private:
    const PeaklensStandinTool *m_tool;
    CUresult m_result = CUDA_SUCCESS;
};

CUresult allocate(ApiCall &call, CUdeviceptr *address, std::size_t bytes, CUstream stream, bool fromPool)
{
    if (!address || bytes == 0)
        return call.result(CUDA_ERROR_INVALID_VALUE);
    Device &state = device();
    {
        std::lock_guard lock(state.mutex);
        if (state.used + bytes > kDeviceBytes)
            return call.result(CUDA_ERROR_OUT_OF_MEMORY);
        *address = state.next;
        state.next += (bytes + 511) / 512 * 512;
        state.used += bytes;
        state.blocks.emplace(*address, bytes);
    }
    if (call.tool())
        call.tool()->memory(1, *address, bytes, streamId(stream), fromPool);
    return call.result(CUDA_SUCCESS);
}

CUresult release(ApiCall &call, CUdeviceptr address, CUstream stream, bool fromPool)
{
    Device &state = device();
    std::size_t bytes = 0;
    {
        std::lock_guard lock(state.mutex);
        const auto block = state.blocks.find(address);
        if (block == state.blocks.end())
            return call.result(CUDA_ERROR_INVALID_VALUE);
        bytes = block->second;
        state.used -= bytes;
        state.blocks.erase(block);
    }
    if (call.tool())
        call.tool()->memory(0, address, bytes, streamId(stream), fromPool);
    return call.result(CUDA_SUCCESS);
}

} // namespace

extern "C" {

void peaklensStandinSetTool(const PeaklensStandinTool *tool)
{
    g_tool.store(tool);
}

const PeaklensStandinTool *peaklensStandinTool(void)
{
    return g_tool.load();
}

CUresult cuInit(unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    static std::once_flag once;
    std::call_once(once, [] {
        const char *path = std::getenv("CUDA_INJECTION64_PATH");
        if (!path || !*path)
            return;
        void *library = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            std::fprintf(stderr, "libcuda stand-in: cannot load the injection library: %s\n", ::dlerror());
            return;
        }
        using Initialize = int (*)();
        if (const auto initialize = reinterpret_cast<Initialize>(::dlsym(library, "InitializeInjection")))
            initialize();
        else
            std::fprintf(stderr, "libcuda stand-in: %s has no InitializeInjection\n", path);
    });
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = CUDA_VERSION;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = deviceCount();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *handle, int ordinal)
{
    if (!handle || ordinal < 0 || ordinal >= deviceCount())
        return CUDA_ERROR_INVALID_DEVICE;
    *handle = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice handle)
{
    if (!name || length <= 0 || handle < 0 || handle >= deviceCount())
        return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, static_cast<std::size_t>(length), "PeakLens stand-in GPU %d", handle);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice handle)
{
    if (!bytes || handle < 0 || handle >= deviceCount())
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = kDeviceBytes;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *address, size_t bytes)
{
    ApiCall call(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
    return allocate(call, address, bytes, nullptr, false);
}

CUresult cuMemFree(CUdeviceptr address)
{
    ApiCall call(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2);
    return release(call, address, nullptr, false);
}

CUresult cuMemAllocAsync(CUdeviceptr *address, size_t bytes, CUstream stream)
{
    ApiCall call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync);
    return allocate(call, address, bytes, stream, true);
}

CUresult cuMemFreeAsync(CUdeviceptr address, CUstream stream)
{
    ApiCall call(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync);
    return release(call, address, stream, true);
}

CUresult cuStreamCreate(CUstream *stream, unsigned int)
{
    if (!stream)
        return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(device().mutex);
    *stream = reinterpret_cast<CUstream>(device().nextStream++); // a handle, never dereferenced
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream)
{
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *)
{
    if (!module)
        return CUDA_ERROR_INVALID_VALUE;
    static int image;
    *module = reinterpret_cast<CUmodule>(&image);
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    if (!function || !module || !name)
        return CUDA_ERROR_INVALID_VALUE;
    // A function handle is its name, kept for the life of the process.
    static std::mutex mutex;
    static std::set<std::string> *names = new std::set<std::string>;
    std::lock_guard lock(mutex);
    *function = reinterpret_cast<CUfunction>(const_cast<char *>(names->insert(name).first->c_str()));
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned int gridX, unsigned int, unsigned int, unsigned int, unsigned int,
                        unsigned int, unsigned int, CUstream stream, void **, void **)
{
    ApiCall call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    if (!function)
        return call.result(CUDA_ERROR_INVALID_HANDLE);
    if (call.tool())
        call.tool()->kernel(reinterpret_cast<const char *>(function), streamId(stream), std::uint64_t(gridX) * 1000);
    return call.result(CUDA_SUCCESS);
}

} // extern "C"
