// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a recording backend sees, turned into a streaming *.peaklens: the helper's ranges
// pushed and popped per thread as they happen, and memory and activity records delivered
// in batches (CUPTI hands them over later, in buffers; PyTorch's allocator as it goes).
//
// Each allocation is attributed to the innermost fwd:/bwd:/opt range open on the thread
// that made the call (the record's own thread, else the API record with the same
// correlation id) at the allocation's time; step:N ranges become steps. Events carry no
// category: the file says "categories" = "lifetime" and the reader classifies them
// (core/trace/lifetimecategories). Not thread-safe: ProcessRecording serializes every call.

#include "core/record/activityrecords.h"
#include "core/record/manifest.h"

#include "core/format/tracewriter.h"
#include "core/trace/stacktable.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace peaklens::record {

class RecordingSession
{
public:
    struct Options
    {
        std::int64_t originNs = 0; // CUPTI time that becomes 0 in the trace
        // With PyTorch's caching allocator the driver sees segments, not tensors: memory
        // records are then written as reserved memory.
        bool segmentsOnly = false;
        // The total memory of each device the process sees, by ordinal; nullopt where it
        // cannot be known. Asked once, while the first memory record is written: never from
        // a training thread's call or a CUPTI buffer callback.
        std::function<std::vector<std::optional<std::int64_t>>()> deviceTotals;
    };

    // `source` names the backend in the file's source.format ("cupti", "torch").
    RecordingSession(TraceWriter &writer, Options options, std::string_view source = "cupti");

    void pushRange(std::uint32_t thread, std::int64_t timeNs, std::string_view name);
    void popRange(std::uint32_t thread, std::int64_t timeNs);

    // The Python helper's manifest: module kinds and parameter bytes, and the checkpoint
    // toggles that were applied.
    void applyManifest(const Manifest &manifest);

    void add(ActivityRecord record);
    // Writes what the records added since the last batch make known; commits when due.
    // An allocation whose API record has not come within two batches is written without
    // a thread (and so without a layer).
    void endBatch();
    // Writes everything still held, ends the ranges still open at the last time seen and
    // commits.
    void finish();

    std::uint64_t writtenEvents() const { return m_writtenEvents; }

private:
    static constexpr std::uint64_t kNoScope = ~std::uint64_t(0);

    struct Scope
    {
        std::int64_t beginNs = 0;
        std::int64_t endNs = 0; // kOpen while open
        std::uint64_t parent = kNoScope;
        std::uint32_t layer = kNoLayer;
        Phase phase = Phase::Other;
        std::int64_t step = kNoStep;            // the step open when it began
        std::optional<std::int64_t> stepNumber; // set for step:N itself
        bool attributable = false;              // a layer's phase or the optimizer
    };

    // A thread's ranges in the order they began, oldest first; sequence numbers stay
    // valid while old closed ranges are dropped from the front.
    struct ThreadScopes
    {
        std::deque<Scope> history;
        std::uint64_t firstSequence = 0;
        std::vector<std::uint64_t> open;
    };

    struct PendingMemory
    {
        MemoryRecord record;
        std::uint32_t batches = 0;
    };

    std::int64_t relative(std::int64_t timeNs);
    std::uint32_t lane(DeviceType type, std::uint32_t device, std::uint32_t stream);
    std::uint32_t layer(std::string_view path);
    std::pair<std::uint32_t, Phase> scopeAt(std::uint32_t thread, std::int64_t timeNs) const;
    void closeScope(std::uint32_t thread, Scope &scope);
    void writeMemory(const MemoryRecord &record, std::optional<std::uint32_t> thread);
    std::uint32_t operatorStack(std::string_view node, std::string_view op);
    std::uint32_t writtenStack(std::uint32_t parent, const Frame &frame);
    void writePool(const PoolRecord &record);
    void writeKernel(const KernelRecord &record);
    void addMarker(const MarkerRecord &record);
    void dropOldScopes();
    void noteMemoryDevice(std::uint32_t device);
    std::optional<std::int64_t> agreedDeviceMemory() const;

    TraceWriter &m_writer;
    Options m_options;
    std::int64_t m_lastNs = 0;
    std::optional<std::int64_t> m_currentStep;
    std::unordered_map<std::uint32_t, ThreadScopes> m_threads;
    std::map<Lane, std::uint32_t> m_lanes;
    struct LayerEntry
    {
        std::uint32_t id;
        std::uint32_t parent;
    };
    std::map<std::string, LayerEntry, std::less<>> m_layers;
    std::map<std::string, std::uint32_t, std::less<>> m_kernelNames;
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> m_poolBytes;
    std::unordered_map<std::uint32_t, std::uint32_t> m_markerThreads;
    std::unordered_map<std::uint64_t, std::int64_t> m_liveBytes; // address ^ device << 56 -> bytes
    StackTable m_stacks;                                         // as written to the file
    // (node, operator) -> its stack; the backend interns the text, so its address names it.
    std::map<std::pair<const char *, const char *>, std::uint32_t> m_operatorStacks;
    std::optional<std::vector<std::optional<std::int64_t>>> m_deviceTotals; // asked at the first memory record
    std::set<std::uint32_t> m_memoryDevices;
    bool m_deviceMemoryWritten = false;

    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> m_threadOfCall; // correlation -> thread, batch
    std::vector<PendingMemory> m_pending;
    std::uint64_t m_batch = 0;
    std::uint64_t m_writtenEvents = 0;
};

} // namespace peaklens::record
