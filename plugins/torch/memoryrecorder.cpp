// SPDX-License-Identifier: Apache-2.0
#include "memoryrecorder.h"

#include "operatorscopes.h"
#include "reportingcpuallocator.h"
#include "torchcompat.h"

#include "core/trace/units.h"

#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <malloc.h>

#include <algorithm>
#include <utility>

namespace peaklens::replay {

namespace {

using compat::ReportedTotal;

class CudaReporter final : public c10::MemoryReportingInfoBase
{
public:
    void reportMemoryUsage(void *pointer, int64_t bytes, ReportedTotal, ReportedTotal totalReserved, c10::Device device) override
    {
        if (!device.is_cuda())
            return;
        MemoryRecorder &recorder = MemoryRecorder::instance();
        if (bytes > 0)
            recorder.onAllocation(pointer, bytes, true);
        else
            recorder.onFree(pointer);
        recorder.onReserved(static_cast<std::int64_t>(totalReserved));
    }
    void reportOutOfMemory(int64_t bytes, ReportedTotal, ReportedTotal, c10::Device device) override
    {
        if (device.is_cuda())
            MemoryRecorder::instance().onOutOfMemory(bytes);
    }
    bool memoryProfilingEnabled() const override { return true; }
};

} // namespace

void retainFreedCpuMemory()
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest; also stops its dynamic adjustment
    mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

MemoryRecorder &MemoryRecorder::instance()
{
    static MemoryRecorder recorder;
    return recorder;
}

MemoryRecorder::MemoryRecorder()
    : m_origin(std::chrono::steady_clock::now())
{
}

void MemoryRecorder::installCpuAllocator()
{
    static const bool installed = [] {
        retainFreedCpuMemory();
        return ReportingCpuAllocator::install(
            {[](std::int64_t bytes) { return instance().admitCpu(bytes); },
             [](void *pointer, std::int64_t bytes) { instance().onAllocation(pointer, bytes, false); },
             [](void *pointer, std::int64_t) { instance().onFree(pointer); }},
            /*priority=*/100);
    }();
    (void)installed;
}

void MemoryRecorder::setCpuLimit(std::optional<std::int64_t> limitBytes)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_cpuLimit = limitBytes;
}

std::unique_ptr<c10::DebugInfoGuard> MemoryRecorder::listenToCuda()
{
    return std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, std::make_shared<CudaReporter>());
}

void MemoryRecorder::restart(bool cuda)
{
    torchrecord::OperatorScopes::start();
    std::lock_guard<std::mutex> lock(m_mutex);
    m_origin = std::chrono::steady_clock::now();
    m_cudaRun = cuda;
    m_scope = {};
    m_current = m_peak = m_reservedTotal = 0;
    m_events.clear();
    m_reserved.clear();
    m_live.clear();
    m_outOfMemory.reset();
}

void MemoryRecorder::rebase()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<std::pair<std::size_t, std::uint64_t>> order; // by original allocation
    for (const auto &[address, block] : m_live)
        order.emplace_back(block.event, address);
    std::sort(order.begin(), order.end());
    std::vector<RecordedEvent> events;
    events.reserve(order.size());
    for (const auto &[event, address] : order) {
        LiveBlock &block = m_live[address];
        const RecordedEvent &made = m_events[event];
        events.push_back({0, block.bytes, address, made.scope, made.op, made.node});
        block.event = events.size() - 1;
    }
    m_events = std::move(events);
    m_reserved.clear();
    if (m_reservedTotal > 0)
        m_reserved.push_back({0, m_reservedTotal, 0, 0});
    m_outOfMemory.reset();
    m_origin = std::chrono::steady_clock::now();
}

std::int64_t MemoryRecorder::nowNs() const
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - m_origin).count();
}

void MemoryRecorder::setScope(const Scope &scope)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_scope = scope;
}

Scope MemoryRecorder::scope() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_scope;
}

std::int64_t MemoryRecorder::currentBytes() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_current;
}

std::int64_t MemoryRecorder::peakBytes() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_peak;
}

void MemoryRecorder::resetPeak()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_peak = m_current;
}

std::size_t MemoryRecorder::eventCount() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_events.size();
}

void MemoryRecorder::promoteLive(std::size_t since, Category from, Category to)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    for (const auto &[address, block] : m_live) {
        Scope &scope = m_events[block.event].scope;
        if (block.event >= since && scope.category == from)
            scope.category = to;
    }
}

std::vector<RecordedEvent> MemoryRecorder::events(std::size_t from) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return {m_events.begin() + std::ptrdiff_t(std::min(from, m_events.size())), m_events.end()};
}

std::vector<ReservedEvent> MemoryRecorder::reservedEvents(std::size_t from) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return {m_reserved.begin() + std::ptrdiff_t(std::min(from, m_reserved.size())), m_reserved.end()};
}

std::optional<OutOfMemoryRecord> MemoryRecorder::takeOutOfMemory()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return std::exchange(m_outOfMemory, std::nullopt);
}

bool MemoryRecorder::admitCpu(std::int64_t bytes)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_cudaRun || !m_cpuLimit || m_current + bytes <= *m_cpuLimit)
        return true;
    if (!m_outOfMemory)
        m_outOfMemory = OutOfMemoryRecord{nowNs(), bytes, m_scope};
    return false;
}

void MemoryRecorder::onAllocation(const void *pointer, std::int64_t bytes, bool cuda)
{
    if (!pointer || bytes <= 0)
        return;
    const torchrecord::RunningOperator running = torchrecord::OperatorScopes::current();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (cuda != m_cudaRun)
        return;
    const auto address = reinterpret_cast<std::uint64_t>(pointer);
    m_live[address] = {bytes, m_events.size()};
    m_events.push_back({nowNs(), bytes, address, m_scope, running.op, running.node});
    m_current += bytes;
    m_peak = std::max(m_peak, m_current);
}

void MemoryRecorder::onFree(const void *pointer)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto found = m_live.find(reinterpret_cast<std::uint64_t>(pointer));
    if (found == m_live.end())
        return; // a block of an earlier run, or of the other device
    Scope scope = m_scope;
    scope.category = m_events[found->second.event].scope.category;
    m_events.push_back({nowNs(), -found->second.bytes, found->first, scope});
    m_current -= found->second.bytes;
    m_live.erase(found);
}

void MemoryRecorder::onReserved(std::int64_t totalReservedBytes)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (totalReservedBytes == m_reservedTotal)
        return;
    m_reserved.push_back({nowNs(), totalReservedBytes - m_reservedTotal, 0, 0});
    m_reservedTotal = totalReservedBytes;
}

void MemoryRecorder::onOutOfMemory(std::int64_t requestedBytes)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_outOfMemory)
        m_outOfMemory = OutOfMemoryRecord{nowNs(), requestedBytes, m_scope};
}

} // namespace peaklens::replay
