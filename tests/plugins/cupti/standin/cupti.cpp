// SPDX-License-Identifier: Apache-2.0
// A libcupti stand-in: exactly the CUPTI calls the collector makes, with CUPTI's
// documented contract, fed by the libcuda.so.1 and libcudart stand-ins instead of a GPU.
//
// - One subscriber per process: a second cuptiSubscribe gets
//   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
// - Activity records in this toolkit's struct layouts (CUpti_ActivityMemory4,
//   CUpti_ActivityKernel10, CUpti_ActivityAPI), 8-byte aligned, for the kinds enabled.
//   MEMORY_POOL can be enabled but brings nothing: the driver stand-in has no pool calls.
//   Other kinds are CUPTI_ERROR_NOT_SUPPORTED.
//   Buffers are requested from and returned to the client's callbacks on the stand-in's
//   own thread, never on the caller's; cuptiActivityFlushAll waits until that thread has
//   delivered everything recorded so far.
// - The memory record of an API call carries the correlation id of the outermost call
//   open on its thread (the runtime call around a driver call); API records name their
//   thread by cuptiSetThreadIdType (pthread_self by default, the kernel's tid for SYSTEM).
// - NVTX: it is an NVTX injection library (InitializeInjectionNvtx2, the protocol of the
//   toolkit's nvtx3 headers); push and pop reach the subscriber through the
//   CUPTI_CB_DOMAIN_NVTX callback on the calling thread, with CUpti_NvtxData.

#include "standintool.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr auto kDeliveryInterval = std::chrono::milliseconds(200);

std::uint64_t now()
{
    timespec time{};
    ::clock_gettime(CLOCK_REALTIME, &time);
    return std::uint64_t(time.tv_sec) * 1'000'000'000u + std::uint64_t(time.tv_nsec);
}

std::size_t alignedSize(std::size_t bytes)
{
    return (bytes + 7) / 8 * 8;
}

// The size of a record of `kind` in a buffer; 0 for kinds the stand-in never writes.
std::size_t recordSize(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return alignedSize(sizeof(CUpti_ActivityMemory4));
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return alignedSize(sizeof(CUpti_ActivityKernel10));
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: // enabled; no record: the stand-in driver has no pool calls
        return alignedSize(sizeof(CUpti_ActivityMemoryPool3));
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return alignedSize(sizeof(CUpti_ActivityAPI));
    default:
        return 0;
    }
}

struct OpenCall
{
    CUpti_ActivityKind kind;
    CUpti_CallbackId cbid;
    std::uint32_t correlation;
    std::uint64_t start;
};

thread_local std::vector<OpenCall> t_openCalls;
thread_local int t_nvtxDepth = 0;

struct State
{
    std::atomic<bool> subscribed{false};
    std::atomic<CUpti_CallbackFunc> callback{nullptr};
    std::atomic<void *> userdata{nullptr};
    std::atomic<bool> nvtxEnabled{false};
    std::atomic<CUpti_ActivityThreadIdType> threadIdType{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
    std::atomic<std::uint32_t> nextCorrelation{1};

    std::mutex mutex; // guards everything below
    std::set<CUpti_ActivityKind> enabled;
    CUpti_BuffersCallbackRequestFunc requestBuffer = nullptr;
    CUpti_BuffersCallbackCompleteFunc completeBuffer = nullptr;
    std::vector<std::vector<std::uint64_t>> records; // each one record, 8-byte words
    std::map<std::uint32_t, std::uint64_t> streamBusyUntil;
    std::uint64_t flushRequested = 0;
    std::uint64_t flushDelivered = 0;
    std::condition_variable wake;
    std::condition_variable delivered;
    pid_t deliveringPid = 0; // the process whose thread delivers buffers
};

State &state()
{
    static State *instance = new State; // never destroyed: records may come during exit
    return *instance;
}

bool enabled(CUpti_ActivityKind kind)
{
    State &s = state();
    std::lock_guard lock(s.mutex);
    return s.enabled.count(kind) != 0;
}

template<typename Record>
void queue(const Record &record)
{
    std::vector<std::uint64_t> words(alignedSize(sizeof(Record)) / 8, 0);
    std::memcpy(words.data(), &record, sizeof(Record));
    State &s = state();
    std::lock_guard lock(s.mutex);
    s.records.push_back(std::move(words));
}

std::uint32_t threadId()
{
    if (state().threadIdType.load() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return static_cast<std::uint32_t>(::syscall(SYS_gettid));
    return static_cast<std::uint32_t>(::pthread_self());
}

// The buffer thread: hands every queued record over, in buffers the client provides.
void deliver(State &s, std::unique_lock<std::mutex> &lock)
{
    while (!s.records.empty() && s.requestBuffer && s.completeBuffer) {
        const auto request = s.requestBuffer;
        const auto complete = s.completeBuffer;
        lock.unlock();
        uint8_t *buffer = nullptr;
        size_t size = 0;
        size_t maxRecords = 0;
        request(&buffer, &size, &maxRecords);
        lock.lock();
        if (!buffer || size == 0) {
            s.records.clear(); // no buffer, records dropped, as CUPTI does
            break;
        }
        std::size_t used = 0;
        std::size_t count = 0;
        std::size_t taken = 0;
        for (; taken < s.records.size(); ++taken) {
            const std::size_t bytes = s.records[taken].size() * 8;
            if (used + bytes > size || (maxRecords && count == maxRecords))
                break;
            std::memcpy(buffer + used, s.records[taken].data(), bytes);
            used += bytes;
            ++count;
        }
        s.records.erase(s.records.begin(), s.records.begin() + static_cast<std::ptrdiff_t>(taken));
        lock.unlock();
        complete(nullptr, 0, buffer, size, used);
        lock.lock();
        if (taken == 0)
            break; // a buffer too small for one record
    }
}

void deliveryLoop()
{
    State &s = state();
    std::unique_lock lock(s.mutex);
    for (;;) {
        s.wake.wait_for(lock, kDeliveryInterval, [&] { return s.flushRequested != s.flushDelivered; });
        const std::uint64_t flush = s.flushRequested;
        deliver(s, lock);
        s.flushDelivered = flush;
        s.delivered.notify_all();
    }
}

// -- what the driver stand-ins report --------------------------------------------------

std::uint32_t apiEnter(int runtime, std::uint32_t cbid)
{
    const std::uint32_t correlation = state().nextCorrelation.fetch_add(1);
    t_openCalls.push_back({runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER, cbid, correlation, now()});
    return correlation;
}

void apiExit(int result)
{
    if (t_openCalls.empty())
        return;
    const OpenCall call = t_openCalls.back();
    t_openCalls.pop_back();
    if (!enabled(call.kind))
        return;
    CUpti_ActivityAPI record{};
    record.kind = call.kind;
    record.cbid = call.cbid;
    record.start = call.start;
    record.end = now();
    record.processId = static_cast<std::uint32_t>(::getpid());
    record.threadId = threadId();
    record.correlationId = call.correlation;
    record.returnValue = static_cast<std::uint32_t>(result);
    queue(record);
}

std::uint32_t outermostCorrelation()
{
    return t_openCalls.empty() ? 0 : t_openCalls.front().correlation;
}

void memory(int allocation, std::uint64_t address, std::uint64_t bytes, std::uint32_t stream, int fromPool)
{
    if (!enabled(CUPTI_ACTIVITY_KIND_MEMORY2))
        return;
    CUpti_ActivityMemory4 record{};
    record.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    record.memoryOperationType =
        allocation ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    record.correlationId = outermostCorrelation();
    record.address = address;
    record.bytes = bytes;
    record.timestamp = now();
    record.processId = static_cast<std::uint32_t>(::getpid());
    record.deviceId = 0;
    record.contextId = 1;
    record.streamId = stream;
    record.isAsync = fromPool;
    record.memoryPoolConfig.memoryPoolType =
        fromPool ? CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL : CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    queue(record);
}

void kernel(const char *name, std::uint32_t stream, std::uint64_t durationNs)
{
    if (!enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
        return;
    static std::mutex namesMutex;
    static std::set<std::string> *names = new std::set<std::string>; // CUPTI owns the names it hands out
    const char *kept = nullptr;
    {
        std::lock_guard lock(namesMutex);
        kept = names->insert(name).first->c_str();
    }
    CUpti_ActivityKernel10 record{};
    record.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    record.correlationId = outermostCorrelation();
    record.deviceId = 0;
    record.contextId = 1;
    record.streamId = stream;
    record.gridX = static_cast<std::int32_t>(durationNs / 1000);
    record.gridY = record.gridZ = record.blockX = record.blockY = record.blockZ = 1;
    record.name = kept;
    {
        // Kernels on one stream run one after another.
        State &s = state();
        std::lock_guard lock(s.mutex);
        std::uint64_t &busyUntil = s.streamBusyUntil[stream];
        record.queued = record.submitted = now();
        record.start = std::max(record.queued + 1000, busyUntil);
        record.end = record.completed = busyUntil = record.start + durationNs;
    }
    queue(record);
}

const PeaklensStandinTool kTool{apiEnter, apiExit, memory, kernel};

// -- NVTX ------------------------------------------------------------------------------

template<typename Params>
void nvtxCallback(CUpti_CallbackId cbid, const char *function, const Params &params, int returned)
{
    const CUpti_CallbackFunc callback = state().callback.load();
    if (!callback || !state().nvtxEnabled.load())
        return;
    CUpti_NvtxData data{function, &params, &returned};
    callback(state().userdata.load(), CUPTI_CB_DOMAIN_NVTX, cbid, &data);
}

int NVTX_API rangePushA(const char *message)
{
    const int level = t_nvtxDepth++;
    nvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, "nvtxRangePushA", nvtxRangePushA_params{message}, level);
    return level;
}

int NVTX_API rangePushEx(const nvtxEventAttributes_t *attributes)
{
    const int level = t_nvtxDepth++;
    nvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushEx, "nvtxRangePushEx", nvtxRangePushEx_params{attributes}, level);
    return level;
}

int NVTX_API rangePop()
{
    if (t_nvtxDepth == 0)
        return -1;
    const int level = --t_nvtxDepth;
    nvtxCallback(CUPTI_CBID_NVTX_nvtxRangePop, "nvtxRangePop", nvtxRangePop_params{}, level);
    return level;
}

} // namespace

extern "C" {

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    const auto *callbacks = static_cast<const NvtxExportTableCallbacks *>(getExportTable(NVTX_ETID_CALLBACKS));
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table)
        return 0;
    const auto install = [&](unsigned int id, NvtxFunctionPointer function) {
        if (id <= size && table[id])
            *table[id] = function;
    };
    install(NVTX_CBID_CORE_RangePushA, reinterpret_cast<NvtxFunctionPointer>(&rangePushA));
    install(NVTX_CBID_CORE_RangePushEx, reinterpret_cast<NvtxFunctionPointer>(&rangePushEx));
    install(NVTX_CBID_CORE_RangePop, reinterpret_cast<NvtxFunctionPointer>(&rangePop));
    return 1;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **text)
{
    if (!text)
        return CUPTI_ERROR_INVALID_PARAMETER;
    switch (result) {
    case CUPTI_SUCCESS:
        *text = "CUPTI_SUCCESS";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *text = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_NOT_SUPPORTED:
        *text = "CUPTI_ERROR_NOT_SUPPORTED";
        break;
    default:
        *text = "CUPTI_ERROR_INVALID_PARAMETER";
        break;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    State &s = state();
    if (s.subscribed.exchange(true))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    s.userdata.store(userdata);
    s.callback.store(callback);
    peaklensStandinSetTool(&kTool);
    *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&s);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    State &s = state();
    if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&s) || !s.subscribed.load())
        return CUPTI_ERROR_INVALID_PARAMETER;
    s.callback.store(nullptr);
    s.nvtxEnabled.store(false);
    s.subscribed.store(false);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain)
{
    State &s = state();
    if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&s) || !s.subscribed.load())
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (domain != CUPTI_CB_DOMAIN_NVTX)
        return CUPTI_ERROR_NOT_SUPPORTED;
    s.nvtxEnabled.store(enable != 0);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (recordSize(kind) == 0)
        return CUPTI_ERROR_NOT_SUPPORTED;
    State &s = state();
    std::lock_guard lock(s.mutex);
    s.enabled.insert(kind);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    State &s = state();
    std::lock_guard lock(s.mutex);
    s.enabled.erase(kind);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    state().threadIdType.store(type);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = now();
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete)
{
    if (!request || !complete)
        return CUPTI_ERROR_INVALID_PARAMETER;
    State &s = state();
    std::lock_guard lock(s.mutex);
    s.requestBuffer = request;
    s.completeBuffer = complete;
    if (s.deliveringPid != ::getpid()) {
        s.deliveringPid = ::getpid();
        std::thread(deliveryLoop).detach();
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t)
{
    State &s = state();
    std::unique_lock lock(s.mutex);
    if (s.deliveringPid != ::getpid())
        return CUPTI_SUCCESS; // a forked child: the buffer thread stayed in the parent
    const std::uint64_t flush = ++s.flushRequested;
    s.wake.notify_all();
    s.delivered.wait(lock, [&] { return s.flushDelivered >= flush; });
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    std::size_t offset = 0;
    if (*record) {
        const std::size_t size = recordSize((*record)->kind);
        if (size == 0)
            return CUPTI_ERROR_INVALID_KIND;
        offset = static_cast<std::size_t>(reinterpret_cast<uint8_t *>(*record) - buffer) + size;
    }
    if (offset + sizeof(CUpti_Activity) > validBufferSizeBytes)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    auto *next = reinterpret_cast<CUpti_Activity *>(buffer + offset);
    if (offset + recordSize(next->kind) > validBufferSizeBytes || recordSize(next->kind) == 0)
        return CUPTI_ERROR_INVALID_KIND;
    *record = next;
    return CUPTI_SUCCESS;
}

} // extern "C"
