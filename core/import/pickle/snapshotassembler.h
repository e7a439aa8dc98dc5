// SPDX-License-Identifier: Apache-2.0
#pragma once
// Turns the parts of a PyTorch memory snapshot into a Trace, part by part, as a reader meets
// them: a whole Document walked after parsing, or a pickle streamed as it is decoded. The
// allocator's trace per device becomes memory, segment and marker events; blocks alive
// before the trace began (freed without an alloc, or still allocated at dump time) start at
// its beginning; record_function annotations become steps and layer ranges.

#include "addressmap.h"
#include "core/progress.h"
#include "core/trace/tracebuilder.h"
#include "snapshotstacks.h"
#include "value.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace peaklens::pickle {

class SnapshotAssembler
{
public:
    SnapshotAssembler(const std::string &path, const Progress &progress);

    [[noreturn]] void fail(const std::string &problem) const;
    std::span<const Value> expectSequence(const Document &document, const Value &value, const char *what) const;

    void noteTrailingBytes(std::size_t count);
    // How many trace entries are yet to be read, for progress; 0 when not known.
    void expectEntries(std::size_t count) { m_totalEntries = count; }

    void readSettings(const Document &document, const Value *settings);
    // Segments with their blocks, from one batch or from the whole list.
    void readSegments(const Document &document, std::span<const Value> segments);
    void readAnnotations(const Document &document, std::span<const Value> annotations);
    // Counted before entries are read: a pickle may list one shared trace many times.
    void chargeEntries(std::size_t count) const;
    // Trace entries of one device, `firstIndex` being the first one's index in its list
    // (entries without a time are placed by it).
    void readDeviceTrace(const Document &document, std::size_t device, std::span<const Value> entries, std::size_t firstIndex);
    // One trace entry: its keys and values in turn.
    void readEntry(const Document &document, std::size_t device, std::span<const Value> pairs, std::size_t index);

    // Room for this many events of a device, so that they are not copied as they grow.
    void reserveEvents(std::size_t device, std::size_t count);
    // For a streaming reader: what stands in for a released container, and forgetting them.
    Value standIn(const Value &container) const { return m_stacks.standIn(container); }
    void forgetFrom(std::size_t firstContainer) { m_stacks.forgetFrom(firstContainer); }

    // `hasTraces`: whether the snapshot has device traces (else it holds only its state at dump time).
    std::shared_ptr<const Trace> finish(bool hasTraces);

private:
    struct Block
    {
        std::int64_t bytes = 0;
        std::uint32_t stack = 0;
        Category category = Category::Unknown;
        std::uint64_t stream = 0;
    };

    struct Segment
    {
        std::uint64_t addr = 0; // 0 in snapshots too old to say
        std::int64_t bytes = 0;
        std::uint64_t stream = 0;
        MemoryPool pool; // segment_pool_id; the default pool in snapshots too old to say
    };

    // Everything known about one device, gathered before events go to the builder so that
    // blocks found to pre-exist the trace can be placed at its start.
    struct DeviceState
    {
        std::vector<MemoryEvent> events;
        std::vector<ReservedEvent> reserved;
        std::vector<MemoryEvent> preexisting;
        AddressMap<Block> live;
        std::int64_t reservedNow = 0;
        std::int64_t lowestReserved = 0;
        std::int64_t firstTimeNs = INT64_MAX;
        // Dump-time state, from "segments".
        std::vector<std::pair<std::uint64_t, Block>> activeAtDump;
        std::vector<Segment> segmentsAtDump;
        std::int64_t reservedAtDump = 0;
        std::int64_t blockBytesAtDump = 0; // the allocator's sizes of the blocks allocated at dump time
        bool hasSegments = false;
    };

    struct EntryFields
    {
        const Value *action = nullptr, *addr = nullptr, *size = nullptr, *stream = nullptr, *time = nullptr, *frames = nullptr,
                    *category = nullptr, *compileContext = nullptr, *userMetadata = nullptr;
    };
    using Field = const Value *EntryFields::*;
    enum class Action { Other, Alloc, Free, SegmentAlloc, SegmentFree, OutOfMemory, Snapshot };

    // Keys and actions are strings a pickle writes once and then refers to: known again by
    // where their text lies, they are compared once.
    struct KnownText
    {
        const char *text = nullptr;
        std::uint32_t size = 0;
        bool is(const Value &value) const { return value.text == text && value.size == size; }
    };
    struct KnownKey : KnownText
    {
        Field field = nullptr;
    };
    struct KnownAction : KnownText
    {
        Action action = Action::Other;
    };
    struct LastLane
    {
        std::int16_t device = 0;
        std::uint64_t stream = 0;
        std::uint32_t lane = 0;
    };

    std::int16_t deviceIndex(const Document &document, const Value &dict) const;
    std::uint32_t lane(std::int16_t device, std::uint64_t stream);
    // `lane` in the pool of the dump-time segment holding `addr`: a block or segment of the
    // trace is in its segment's pool. Segments gone by the dump name no pool: the default one.
    std::uint32_t inPoolAt(const DeviceState &state, std::uint32_t lane, std::uint64_t addr);
    // The trace's stack for a "frames" value.
    std::uint32_t stackOf(std::uint32_t frames);
    DeviceState &traceOf(std::size_t device);
    EntryFields fieldsOf(std::span<const Value> pairs);
    static Field fieldOf(std::string_view key);
    Action actionOf(const Value *action);
    static Category categoryOf(const Value *value);
    MemoryEvent freeEvent(std::int64_t timeNs, std::uint64_t addr, const Block &block, std::int16_t deviceIndex);
    void addReserved(DeviceState &state, std::int64_t timeNs, std::int64_t delta, std::uint64_t addr, std::int16_t deviceIndex,
                     std::uint64_t stream);
    void emitDevices();
    void addInitialSegments(const DeviceState &state, std::int16_t deviceIndex, std::int64_t start, std::int64_t initialReserved);

    const std::string &m_path;
    const Progress &m_progress;
    TraceBuilder m_builder;
    SnapshotStacks m_stacks;
    std::map<std::int16_t, DeviceState> m_devices;
    std::pair<const std::int16_t, DeviceState> *m_lastTrace = nullptr; // in m_devices
    std::vector<std::vector<Range>> m_rangesByDevice;
    std::optional<LastLane> m_lastLane;
    std::array<KnownKey, 8> m_knownKeys; // by the key's place in the entry
    std::array<KnownAction, 8> m_knownActions;
    std::size_t m_nextKnownAction = 0;
    std::size_t m_totalEntries = 0;
    std::size_t m_sawEntries = 0;
    bool m_sawTime = false;
    bool m_sawHistory = false; // an alloc, free or segment entry: more than the state at dump time
    std::string m_deviceFree;  // one "DEVICE TIME_NS BYTES" line per OOM that carries it
    std::size_t m_phasedByStacks = 0;
    std::size_t m_layeredByStacks = 0;
};

} // namespace peaklens::pickle
