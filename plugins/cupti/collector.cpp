// libpeaklens_cupti.so: the CUDA driver loads it through CUDA_INJECTION64_PATH and calls
// InitializeInjection() once, when CUDA initializes in the process. It records device
// memory, memory pools, kernels and API calls through CUPTI's activity API and NVTX
// push/pop ranges through its callback API, and streams them into one *.peaklens per
// process (docs/recording.md). Configuration comes from the environment that
// `peaklens-cli record` sets: PEAKLENS_OUT, PEAKLENS_COMMAND, PEAKLENS_CWD,
// PEAKLENS_ALLOCATOR, PEAKLENS_CHECKPOINT, and the launcher's RANK / LOCAL_RANK / WORLD_SIZE
// (torchrun) or SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS (srun).

#include "activitydecoder.h"
#include "recordingsession.h"

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/trace/metadata.h"

#include <cuda.h>
#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace peaklens::cupti {

namespace {

constexpr std::size_t kBufferBytes = 8 << 20;
constexpr auto kFlushInterval = std::chrono::milliseconds(500);

// What CUPTI hands over, queued: training threads and CUPTI's buffer thread only append
// here and never wait for the file; the flusher thread drains it into the session.
struct Queue
{
    struct RangeCall
    {
        std::uint32_t thread;
        std::int64_t timeNs;
        std::optional<std::string> pushed; // empty: a pop
    };
    std::vector<RangeCall> ranges;
    std::vector<ActivityRecord> records;
};

struct Collector
{
    std::mutex queueMutex;
    Queue queue;

    std::mutex mutex; // guards writer and session
    std::unique_ptr<TraceWriter> writer;
    std::unique_ptr<RecordingSession> session;
    std::string path;
    std::string manifestPath;

    std::mutex flushMutex;
    std::condition_variable flushWake;
    bool stopping = false;
    std::thread flusher;
};

// Lives until the process exits; never destroyed, so late CUPTI callbacks stay safe.
Collector *g_collector = nullptr;

std::string environment(const char *name)
{
    const char *value = std::getenv(name);
    return value ? value : "";
}

void say(const std::string &line)
{
    std::fprintf(stderr, "peaklens: %s\n", line.c_str());
}

std::string cuptiMessage(CUptiResult result)
{
    const char *text = nullptr;
    cuptiGetResultString(result, &text);
    return text ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

// What the launcher says of this process: torchrun's variables, else Slurm's (srun
// without torchrun), else nothing.
std::string launcherValue(const char *torchrun, const char *slurm)
{
    const std::string value = environment(torchrun);
    return value.empty() ? environment(slurm) : value;
}

std::string globalRank()
{
    return launcherValue("RANK", "SLURM_PROCID");
}

std::string localRank()
{
    return launcherValue("LOCAL_RANK", "SLURM_LOCALID");
}

// "rank1-pid4242": which process of a (possibly distributed) run this is, from its global
// rank (else its local one), so the ranks of several nodes can share one folder; the
// Python helper names its manifest the same way.
std::string processTag()
{
    std::string tag;
    if (!globalRank().empty())
        tag = "rank" + globalRank() + "-";
    else if (!localRank().empty())
        tag = "local" + localRank() + "-";
    return tag + "pid" + std::to_string(::getpid());
}

// Stops recording after a write failed (a full disk, say); training goes on.
void abandon(const std::exception &error)
{
    say("recording stopped, " + std::string(error.what()));
    g_collector->session.reset();
    g_collector->writer.reset();
}

void CUPTIAPI onBufferRequested(uint8_t **buffer, size_t *size, size_t *maxRecords)
{
    *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxRecords = 0;
}

void CUPTIAPI onBufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t validSize)
{
    std::vector<ActivityRecord> records;
    CUpti_Activity *record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        if (auto decoded = decodeActivity(*record))
            records.push_back(std::move(*decoded));
    }
    std::free(buffer);
    if (!g_collector)
        return;
    std::lock_guard lock(g_collector->queueMutex);
    auto &queued = g_collector->queue.records;
    queued.insert(queued.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
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
    if (domain != CUPTI_CB_DOMAIN_NVTX || !g_collector || !data)
        return;
    const bool push = id == CUPTI_CBID_NVTX_nvtxRangePushA || id == CUPTI_CBID_NVTX_nvtxRangePushEx;
    if (!push && id != CUPTI_CBID_NVTX_nvtxRangePop)
        return;
    uint64_t now = 0;
    cuptiGetTimestamp(&now);
    Queue::RangeCall call{static_cast<std::uint32_t>(::syscall(SYS_gettid)), static_cast<std::int64_t>(now), std::nullopt};
    if (push)
        call.pushed = std::string(pushedName(id, *static_cast<const CUpti_NvtxData *>(data)));
    std::lock_guard lock(g_collector->queueMutex);
    g_collector->queue.ranges.push_back(std::move(call));
}

// When a queued record happened, for the records whose place among the ranges matters.
std::optional<std::int64_t> recordTime(const ActivityRecord &record)
{
    if (const auto *memory = std::get_if<MemoryRecord>(&record))
        return memory->timeNs;
    if (const auto *pool = std::get_if<PoolRecord>(&record))
        return pool->timeNs;
    return std::nullopt;
}

// Moves the items `ready` accepts from `queued` to `batch`; both keep their order.
template <typename Item, typename Ready>
void takeReady(std::vector<Item> &queued, std::vector<Item> &batch, Ready ready)
{
    const auto later = std::stable_partition(queued.begin(), queued.end(), ready);
    batch.assign(std::make_move_iterator(queued.begin()), std::make_move_iterator(later));
    queued.erase(queued.begin(), later);
}

// Writes the ranges and memory records queued from before `untilNs` (the moment of the
// CUPTI flush that delivered every record up to it), so a commit holds no range whose
// allocations are still in CUPTI's buffers, nor the reverse; later ones wait for the next
// batch. (A memory record can still wait in the session for the API record of its call.)
// Commits at least every second. Ranges go first: every range around a delivered
// allocation was pushed before it was made.
void endBatch(std::int64_t untilNs)
{
    Queue batch;
    {
        std::lock_guard lock(g_collector->queueMutex);
        Queue &queue = g_collector->queue;
        takeReady(queue.ranges, batch.ranges, [&](const Queue::RangeCall &call) { return call.timeNs < untilNs; });
        takeReady(queue.records, batch.records,
                  [&](const ActivityRecord &record) { return recordTime(record).value_or(0) < untilNs; });
    }
    std::lock_guard lock(g_collector->mutex);
    if (!g_collector->session)
        return;
    try {
        RecordingSession &session = *g_collector->session;
        for (const Queue::RangeCall &call : batch.ranges) {
            if (call.pushed)
                session.pushRange(call.thread, call.timeNs, *call.pushed);
            else
                session.popRange(call.thread, call.timeNs);
        }
        for (ActivityRecord &record : batch.records)
            session.add(std::move(record));
        session.endBatch();
    } catch (const std::exception &error) {
        abandon(error);
    }
}

void flushLoop()
{
    std::unique_lock lock(g_collector->flushMutex);
    while (!g_collector->flushWake.wait_for(lock, kFlushInterval, [] { return g_collector->stopping; })) {
        lock.unlock();
        uint64_t now = 0;
        cuptiGetTimestamp(&now);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        endBatch(static_cast<std::int64_t>(now));
        lock.lock();
    }
}

void applyManifest()
{
    std::ifstream in(g_collector->manifestPath);
    if (!in)
        return; // the script did not use the helper: no layer kinds
    std::ostringstream text;
    text << in.rdbuf();
    try {
        g_collector->session->applyManifest(parseManifest(text.str()));
    } catch (const Error &error) {
        say(g_collector->manifestPath + ": " + error.what());
    }
}

void finishRecording()
{
    if (!g_collector)
        return;
    {
        std::lock_guard lock(g_collector->flushMutex);
        g_collector->stopping = true;
    }
    g_collector->flushWake.notify_all();
    if (g_collector->flusher.joinable())
        g_collector->flusher.join();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    endBatch(std::numeric_limits<std::int64_t>::max());
    std::lock_guard lock(g_collector->mutex);
    if (!g_collector->session)
        return;
    try {
        applyManifest();
        g_collector->session->finish();
        const std::uint64_t events = g_collector->session->writtenEvents();
        g_collector->session.reset();
        g_collector->writer->finish();
        g_collector->writer.reset();
        say("wrote " + g_collector->path + " (" + std::to_string(events) + " memory events)");
    } catch (const std::exception &error) {
        abandon(error);
    }
}

// A function of the driver that loaded this collector. The collector does not link the
// driver: the driver comes with the GPU, not with a package a .deb could depend on.
template <typename Function>
Function driverFunction(const char *name)
{
    static void *const driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return driver ? reinterpret_cast<Function>(::dlsym(driver, name)) : nullptr;
}

// What each device the process sees can hold, from the driver. The session asks from the
// flusher thread (or the exit handler), when it writes its first memory record: CUDA has
// finished initializing by then, and no training thread waits for the answer.
std::vector<std::optional<std::int64_t>> deviceTotals()
{
    const auto getCount = driverFunction<decltype(&cuDeviceGetCount)>("cuDeviceGetCount");
    const auto getDevice = driverFunction<decltype(&cuDeviceGet)>("cuDeviceGet");
    const auto totalMemory = driverFunction<decltype(&cuDeviceTotalMem)>("cuDeviceTotalMem_v2");
    int count = 0;
    if (!getCount || !getDevice || !totalMemory || getCount(&count) != CUDA_SUCCESS || count <= 0)
        return {};
    std::vector<std::optional<std::int64_t>> totals(static_cast<std::size_t>(count));
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        CUdevice device = 0;
        std::size_t bytes = 0;
        if (getDevice(&device, ordinal) == CUDA_SUCCESS && totalMemory(&bytes, device) == CUDA_SUCCESS && bytes > 0)
            totals[static_cast<std::size_t>(ordinal)] = static_cast<std::int64_t>(bytes);
    }
    return totals;
}

// A forked child (a data-loader worker) must not touch the parent's file.
void forgetInChild()
{
    g_collector = nullptr;
}

void writeProcessMeta(TraceWriter &writer)
{
    writer.writeMeta(metakey::Description, "recorded by the CUPTI collector");
    const std::string allocator = environment("PEAKLENS_ALLOCATOR");
    writer.writeMeta(metakey::AllocatorMode, allocator.empty() ? "native" : allocator);
    writer.writeMeta(metakey::Command, environment("PEAKLENS_COMMAND"));
    const std::string cwd = environment("PEAKLENS_CWD");
    writer.writeMeta(metakey::WorkingDirectory, cwd.empty() ? std::filesystem::current_path().string() : cwd);
    writer.writeMeta(metakey::Checkpoint, environment("PEAKLENS_CHECKPOINT"));
    writer.writeMeta(metakey::ProcessId, std::to_string(::getpid()));
    const std::pair<std::string, std::string_view> launcher[] = {{globalRank(), metakey::Rank},
                                                                 {localRank(), metakey::LocalRank},
                                                                 {launcherValue("WORLD_SIZE", "SLURM_NTASKS"), metakey::WorldSize}};
    for (const auto &[value, key] : launcher) {
        if (!value.empty())
            writer.writeMeta(key, value);
    }
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
    const std::filesystem::path out = environment("PEAKLENS_OUT").empty() ? std::filesystem::current_path()
                                                                            : std::filesystem::path(environment("PEAKLENS_OUT"));
    const std::string tag = processTag();
    g_collector = new Collector;
    g_collector->path = (out / (tag + ".peaklens")).string();
    g_collector->manifestPath = (out / (tag + ".manifest.json")).string();
    try {
        g_collector->writer = std::make_unique<TraceWriter>(g_collector->path);
        writeProcessMeta(*g_collector->writer);
        uint64_t origin = 0;
        cuptiGetTimestamp(&origin);
        RecordingSession::Options options;
        options.originNs = static_cast<std::int64_t>(origin);
        options.segmentsOnly = environment("PEAKLENS_ALLOCATOR") == "native" || environment("PEAKLENS_ALLOCATOR").empty();
        options.deviceTotals = deviceTotals;
        g_collector->session = std::make_unique<RecordingSession>(*g_collector->writer, options);
    } catch (const std::exception &error) {
        say(std::string("cannot record: ") + error.what());
        cuptiUnsubscribe(subscriber);
        g_collector = nullptr;
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

    g_collector->flusher = std::thread(flushLoop);
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
