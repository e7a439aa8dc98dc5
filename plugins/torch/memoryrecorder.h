// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sees every tensor allocation of a replay and attributes it to the layer and phase
// running at the time. On CPU it is the process's CPU allocator (a counting wrapper of
// LibTorch's own, with an optional limit that turns into an out-of-memory result); on
// CUDA it listens to the caching allocator through the profiler's memory-reporting hook.

#include "core/trace/category.h"
#include "core/trace/layer.h"
#include "core/trace/phase.h"
#include "core/trace/reservedevent.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace c10 {
class DebugInfoGuard;
}

namespace peaklens::replay {

// Keeps memory that CPU tensors free inside the process (glibc malloc: no trimming, and no
// mmap for blocks under 32 MiB) the way the CUDA caching allocator keeps GPU memory, so that
// a CPU step time measures compute rather than page faults of re-touched memory.
void retainFreedCpuMemory();

struct Scope
{
    std::uint32_t layer = kNoLayer;
    Phase phase = Phase::Other;
    Category category = Category::Unknown; // of what it allocates, until promoted
};

struct RecordedEvent
{
    std::int64_t timeNs = 0;
    std::int64_t deltaBytes = 0;
    std::uint64_t addr = 0;
    Scope scope;
    // An allocation's operator and the autograd node running it (operatorscopes.h); the
    // text lives as long as the process.
    std::string_view op, node;
};

struct OutOfMemoryRecord
{
    std::int64_t timeNs = 0;
    std::int64_t requestedBytes = 0;
    Scope scope;
};

class MemoryRecorder
{
public:
    static MemoryRecorder &instance();

    // Makes the counting allocator the process's CPU allocator (once; later calls do nothing).
    void installCpuAllocator();
    // CPU allocations beyond this many bytes in use fail as out of memory.
    void setCpuLimit(std::optional<std::int64_t> limitBytes);
    // Records the CUDA caching allocator's blocks on this thread and the threads it starts
    // (autograd's device threads inherit it) for as long as the guard lives.
    std::unique_ptr<c10::DebugInfoGuard> listenToCuda();

    // Starts a run: forgets all events, blocks and the out-of-memory record (blocks of an
    // earlier run no longer count), and the clock starts again at zero. `cuda` runs record
    // only CUDA blocks, CPU runs only CPU blocks.
    void restart(bool cuda);
    std::int64_t nowNs() const;
    // Starts the recording again at time zero from what is live now: each live block
    // becomes an allocation at time zero with its layer, phase and category, so a trace can
    // begin after warm-up with parameters, optimizer state and gradients in place.
    void rebase();

    void setScope(const Scope &scope);
    Scope scope() const;

    std::int64_t currentBytes() const;
    std::int64_t peakBytes() const;
    void resetPeak();

    std::size_t eventCount() const;
    // Blocks allocated at event index `since` or later that are still live and still
    // `from` take `to`: what outlives the forward is an activation, what outlives the
    // backward a gradient, what outlives the optimizer step its state.
    void promoteLive(std::size_t since, Category from, Category to);

    // Those recorded since the last restart or rebase, from index `from` on.
    std::vector<RecordedEvent> events(std::size_t from = 0) const;
    std::vector<ReservedEvent> reservedEvents(std::size_t from = 0) const; // lane 0, CUDA only
    // The first failed allocation since the last call (or restart, or rebase), and forgets
    // it: a later failure gets its own record.
    std::optional<OutOfMemoryRecord> takeOutOfMemory();

    // Called by the allocators.
    bool admitCpu(std::int64_t bytes);
    void onAllocation(const void *pointer, std::int64_t bytes, bool cuda);
    void onFree(const void *pointer);
    void onReserved(std::int64_t totalReservedBytes);
    void onOutOfMemory(std::int64_t requestedBytes);

private:
    MemoryRecorder();

    mutable std::mutex m_mutex;
    std::chrono::steady_clock::time_point m_origin;
    Scope m_scope;
    std::int64_t m_current = 0;
    std::int64_t m_peak = 0;
    std::int64_t m_reservedTotal = 0;
    std::optional<std::int64_t> m_cpuLimit;
    std::vector<RecordedEvent> m_events;
    std::vector<ReservedEvent> m_reserved;
    struct LiveBlock
    {
        std::int64_t bytes = 0;
        std::size_t event = 0; // its allocation
    };
    bool m_cudaRun = false;
    std::unordered_map<std::uint64_t, LiveBlock> m_live;
    std::optional<OutOfMemoryRecord> m_outOfMemory;
};

} // namespace peaklens::replay
