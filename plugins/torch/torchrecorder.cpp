// SPDX-License-Identifier: Apache-2.0
// libpeaklens_torch.so: records a training process through PyTorch's own allocator
// reports, with the caching allocator left as it is. The Python helper loads it into a
// process that `peaklens-cli record --backend torch` started, right after `import torch`
// (plugins/python/peaklens/_torchrecord.py), and calls peaklens_torch_start() on the thread
// that imported torch. From then on c10 reports every block its allocators hand out or
// take back (the CUDA caching allocator, with the device's reserved total) to the
// memory-reporting hook installed on that thread, which autograd's threads inherit; CPU
// blocks come from a reporting allocator set in the CPU allocator's place, from any
// thread (a collective's workers too); the helper's fwd:/bwd:/step: ranges come through peaklens_torch_push/pop, and
// each block is put down to the operator that asked for it (operatorscopes.h). Both
// go to core/record's ProcessRecording, which writes PEAKLENS_OUT/<rank-pid>.peaklens as
// the run goes. The file is made at the first range or block, so a launcher that only
// imports torch (torchrun's) leaves none; a forked child (a data-loader worker) records
// nothing.

#include "operatorscopes.h"
#include "reportingcpuallocator.h"
#include "torchcompat.h"

#include "core/record/drivermemory.h"
#include "core/record/processrecording.h"

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace peaklens::torchrecord {

namespace {

using record::ProcessRecording;

std::int64_t steadyNow()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Recorder
{
public:
    // The recording, made at its first use; null once it failed or in a forked child.
    ProcessRecording *recording()
    {
        if (m_forked.load(std::memory_order_relaxed))
            return nullptr;
        std::call_once(m_made, [this] {
            ProcessRecording::Backend backend;
            backend.source = "torch";
            backend.description = "recorded through PyTorch's allocator";
            backend.now = steadyNow;
            backend.options.deviceTotals = record::driverDeviceTotals;
            try {
                m_recording = std::make_unique<ProcessRecording>(std::move(backend));
                m_active = m_recording.get();
            } catch (const std::exception &error) {
                record::say(std::string("cannot record: ") + error.what());
            }
        });
        return m_active.load(std::memory_order_acquire);
    }

    // Blocks and reserved totals, as c10 reports them.
    void block(void *pointer, std::int64_t bytes, std::size_t reserved, c10::Device device)
    {
        const bool cuda = device.is_cuda();
        if ((!cuda && !device.is_cpu()) || bytes == 0)
            return; // other devices (meta, MPS, ...) hold no memory we can show
        ProcessRecording *target = recording();
        if (!target)
            return;
        thread_local const std::uint32_t thread = ProcessRecording::currentThread();
        const std::int64_t now = steadyNow();
        const std::uint32_t ordinal = device.has_index() ? static_cast<std::uint32_t>(device.index()) : 0;
        record::MemoryRecord memory;
        memory.allocation = bytes > 0;
        memory.address = reinterpret_cast<std::uintptr_t>(pointer);
        memory.bytes = bytes > 0 ? bytes : -bytes;
        memory.timeNs = now;
        memory.device = ordinal;
        memory.deviceType = cuda ? DeviceType::Cuda : DeviceType::Cpu;
        memory.thread = thread;
        if (bytes > 0) {
            const RunningOperator running = OperatorScopes::current();
            memory.op = running.op;
            memory.node = running.node;
        }
        target->add(memory);
        if (cuda)
            noteReserved(*target, ordinal, static_cast<std::int64_t>(reserved), now);
    }

    // Writes the rest and closes the file; blocks and ranges after it are not kept.
    void finish()
    {
        if (ProcessRecording *recording = m_active.exchange(nullptr))
            recording->finish();
    }

    void start()
    {
        ::pthread_atfork(nullptr, nullptr, [] { instance().m_forked = true; });
        std::atexit([] { instance().finish(); });
    }

    static Recorder &instance()
    {
        // Never destroyed: allocator reports may come while the process exits.
        static Recorder *const recorder = new Recorder;
        return *recorder;
    }

private:
    // The caching allocator's reserved memory per device, as a pool whose size changes.
    void noteReserved(ProcessRecording &target, std::uint32_t device, std::int64_t reserved, std::int64_t now)
    {
        if (device >= m_reserved.size() || m_reserved[device].exchange(reserved, std::memory_order_relaxed) == reserved)
            return;
        target.add(record::PoolRecord{0, reserved, now, device});
    }

    std::atomic<bool> m_forked = false; // in a forked child (a data-loader worker): nothing is recorded
    std::once_flag m_made;
    std::unique_ptr<ProcessRecording> m_recording;
    std::atomic<ProcessRecording *> m_active = nullptr;
    std::array<std::atomic<std::int64_t>, 64> m_reserved{}; // by device ordinal
};

// The hook c10's allocators report to while it is the thread's profiler state. PyTorch
// takes whatever holds that state for a profiler's (torch::profiler::impl::profilerEnabled()
// reads its config), so it is one: a profiler that is disabled, except for memory.
class AllocatorReports final : public torch::profiler::impl::ProfilerStateBase
{
public:
    AllocatorReports()
        : ProfilerStateBase(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::Disabled))
    {
    }

    bool memoryProfilingEnabled() const override { return true; }

    torch::profiler::impl::ActiveProfilerType profilerType() override { return torch::profiler::impl::ActiveProfilerType::NONE; }

    void reportMemoryUsage(void *pointer, int64_t bytes, replay::compat::ReportedTotal /*allocated*/,
                           replay::compat::ReportedTotal reserved, c10::Device device) override
    {
        if (device.is_cpu() && replay::ReportingCpuAllocator::insideWrapped())
            return; // the reporting CPU allocator's block: it reports it itself
        Recorder::instance().block(pointer, bytes, static_cast<std::size_t>(reserved), device);
    }
};

} // namespace

} // namespace peaklens::torchrecord

using peaklens::torchrecord::Recorder;

// 0 when recording, 1 when it was already started on this process.
extern "C" __attribute__((visibility("default"))) int peaklens_torch_start()
{
    static std::atomic<bool> started = false;
    if (started.exchange(true))
        return 1;
    Recorder::instance().start();
    peaklens::replay::ReportingCpuAllocator::install(
        {nullptr,
         [](void *pointer, std::int64_t bytes) {
             Recorder::instance().block(pointer, bytes, 0, c10::Device(c10::DeviceType::CPU));
         },
         [](void *pointer, std::int64_t bytes) {
             Recorder::instance().block(pointer, -bytes, 0, c10::Device(c10::DeviceType::CPU));
         }},
        1);
    if (const char *ops = std::getenv("PEAKLENS_TORCH_OPS"); !ops || std::string_view(ops) != "0")
        peaklens::torchrecord::OperatorScopes::start();
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE,
                                     std::make_shared<peaklens::torchrecord::AllocatorReports>());
    return 0;
}

// The PyTorch release this was built against ("2.15.0"): the helper loads it only into a
// process running the same release.
extern "C" __attribute__((visibility("default"))) const char *peaklens_torch_version()
{
    static const std::string version = peaklens::replay::compat::libtorchVersion();
    return version.c_str();
}

// Writes the rest and finishes the file (the helper calls it at interpreter exit, before
// the teardown frees what the script held); later blocks and ranges are not recorded.
extern "C" __attribute__((visibility("default"))) void peaklens_torch_finish()
{
    Recorder::instance().finish();
}

extern "C" __attribute__((visibility("default"))) void peaklens_torch_push(const char *name)
{
    if (auto *recording = Recorder::instance().recording(); recording && name)
        recording->pushRange(name);
}

extern "C" __attribute__((visibility("default"))) void peaklens_torch_pop()
{
    if (auto *recording = Recorder::instance().recording())
        recording->popRange();
}
