// SPDX-License-Identifier: Apache-2.0
// libpeaklens_cupti.so: the CUDA driver loads it through CUDA_INJECTION64_PATH and calls
// InitializeInjection() once, when CUDA initializes in the process. It records device
// memory, memory pools, kernels and API calls through CUPTI's activity API and NVTX
// push/pop ranges through its callback API, and streams them into one *.peaklens per
// process (docs/recording.md). Configuration comes from the environment that
// `peaklens-cli record` sets: PEAKLENS_OUT, PEAKLENS_COMMAND, PEAKLENS_CWD,
// PEAKLENS_ALLOCATOR, PEAKLENS_CHECKPOINT, and the launcher's RANK / LOCAL_RANK / WORLD_SIZE
// (torchrun) or SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS (srun).

#include "activitydecoder.h"

#include "core/record/drivermemory.h"
#include "core/record/processrecording.h"

#include <cuda.h>
#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <dlfcn.h>
#include <pthread.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace peaklens::cupti {

namespace {

using record::ProcessRecording;
using record::say;

constexpr std::size_t kBufferBytes = 8 << 20;

// Lives until the process exits; never destroyed, so late CUPTI callbacks stay safe.
ProcessRecording *g_recording = nullptr;

std::string environment(const char *name)
{
    const char *value = std::getenv(name);
    return value ? value : "";
}

std::string cuptiMessage(CUptiResult result)
{
    const char *text = nullptr;
    cuptiGetResultString(result, &text);
    return text ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

std::int64_t cuptiNow()
{
    uint64_t now = 0;
    cuptiGetTimestamp(&now);
    return static_cast<std::int64_t>(now);
}

void CUPTIAPI onBufferRequested(uint8_t **buffer, size_t *size, size_t *maxRecords)
{
    *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxRecords = 0;
}

void CUPTIAPI onBufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t validSize)
{
    CUpti_Activity *record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        if (auto decoded = decodeActivity(*record); decoded && g_recording)
            g_recording->add(std::move(*decoded));
    }
    std::free(buffer);
}

std::string_view pushedName(CUpti_CallbackId id, const CUpti_NvtxData &data)
{
    if (id == CUPTI_CBID_NVTX_nvtxRangePushA) {
        const char *message = static_cast<const nvtxRangePushA_params *>(data.functionParams)->message;
        return message ? message : "";
    }
    const nvtxEventAttributes_t *attributes = static_cast<const nvtxRangePushEx_params *>(data.functionParams)->eventAttrib;
    if (attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii)
        return attributes->message.ascii;
    return "";
}

void CUPTIAPI onCallback(void *, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data)
{
    if (domain != CUPTI_CB_DOMAIN_NVTX || !g_recording || !data)
        return;
    const bool push = id == CUPTI_CBID_NVTX_nvtxRangePushA || id == CUPTI_CBID_NVTX_nvtxRangePushEx;
    if (push)
        g_recording->pushRange(pushedName(id, *static_cast<const CUpti_NvtxData *>(data)));
    else if (id == CUPTI_CBID_NVTX_nvtxRangePop)
        g_recording->popRange();
}

void finishRecording()
{
    if (g_recording)
        g_recording->finish();
}

// A forked child (a data-loader worker) must not touch the parent's file.
void forgetInChild()
{
    g_recording = nullptr;
}

// NVTX sends its calls to the library NVTX_INJECTION64_PATH names: the libcupti this
// collector already loaded, so that the callback API sees the helper's ranges.
void routeNvtxToCupti()
{
    if (!environment("NVTX_INJECTION64_PATH").empty())
        return;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void *>(&cuptiSubscribe), &info) && info.dli_fname)
        ::setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

bool start()
{
    routeNvtxToCupti();
    CUpti_SubscriberHandle subscriber = nullptr;
    const CUptiResult subscribed = cuptiSubscribe(&subscriber, onCallback, nullptr);
    if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        say("another CUPTI client (a profiler such as Nsight Systems or torch.profiler) owns this process; the training "
            "runs unprofiled.");
        return false;
    }
    if (subscribed != CUPTI_SUCCESS) {
        say("CUPTI cannot start (" + cuptiMessage(subscribed) + "); the training runs unprofiled.");
        return false;
    }
    ProcessRecording::Backend backend;
    backend.source = "cupti";
    backend.description = "recorded by the CUPTI collector";
    backend.now = cuptiNow;
    backend.flush = [] { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); };
    backend.options.segmentsOnly = environment("PEAKLENS_ALLOCATOR") == "native" || environment("PEAKLENS_ALLOCATOR").empty();
    // Asked from the flusher thread (or the exit handler) at the first memory record:
    // CUDA has initialized by then, and no training thread waits for the answer.
    backend.options.deviceTotals = record::driverDeviceTotals;
    try {
        g_recording = new ProcessRecording(std::move(backend));
    } catch (const std::exception &error) {
        say(std::string("cannot record: ") + error.what());
        cuptiUnsubscribe(subscriber);
        return false;
    }

    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted);
    for (CUpti_ActivityKind kind : kRecordedKinds) {
        if (const CUptiResult enabled = cuptiActivityEnable(kind); enabled != CUPTI_SUCCESS)
            say("activity kind " + std::to_string(static_cast<int>(kind)) + " is not available: " + cuptiMessage(enabled));
    }
    // Without NVTX callbacks the ranges still come, later, as marker activity.
    if (cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX) != CUPTI_SUCCESS)
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);

    ::pthread_atfork(nullptr, nullptr, forgetInChild);
    std::atexit(finishRecording);
    return true;
}

} // namespace

} // namespace peaklens::cupti

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void)
{
    static std::once_flag once;
    std::call_once(once, [] { peaklens::cupti::start(); });
    return 1;
}
