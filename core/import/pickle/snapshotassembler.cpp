// SPDX-License-Identifier: Apache-2.0
#include "snapshotassembler.h"

#include "core/error.h"
#include "core/import/annotationranges.h"
#include "core/import/stackscopes.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "streamsink.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace peaklens::pickle {

namespace {

std::uint64_t bitsOf(const Value *value)
{
    return value && value->isInteger() ? value->bits() : 0;
}

// The address ranges that something already claimed, joined where they touch.
class ClaimedRanges
{
public:
    // What in [addr, addr + bytes) nobody claimed yet, in address order; claims all of it.
    // A range that would run past the end of the address space stops there.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> claim(std::uint64_t addr, std::int64_t bytes)
    {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> unclaimed;
        if (bytes <= 0)
            return unclaimed;
        const std::uint64_t end =
            addr + std::min(static_cast<std::uint64_t>(bytes), std::numeric_limits<std::uint64_t>::max() - addr);
        std::uint64_t joinedStart = addr, joinedEnd = end, cursor = addr;
        auto range = m_ranges.upper_bound(addr);
        if (range != m_ranges.begin() && std::prev(range)->second >= addr)
            --range;
        // Claimed ranges neither overlap nor touch, so those met here all lie within or
        // against [addr, end).
        while (range != m_ranges.end() && range->first <= end) {
            if (range->first > cursor)
                unclaimed.emplace_back(cursor, range->first);
            cursor = std::max(cursor, range->second);
            joinedStart = std::min(joinedStart, range->first);
            joinedEnd = std::max(joinedEnd, range->second);
            range = m_ranges.erase(range);
        }
        if (cursor < end)
            unclaimed.emplace_back(cursor, end);
        if (joinedStart < joinedEnd)
            m_ranges.emplace(joinedStart, joinedEnd);
        return unclaimed;
    }

private:
    std::map<std::uint64_t, std::uint64_t> m_ranges; // start -> end
};

} // namespace

SnapshotAssembler::SnapshotAssembler(const std::string &path, const Progress &progress)
    : m_path(path)
    , m_progress(progress)
    , m_stacks(m_builder.stacks(), path)
{
    m_builder.setMeta(metakey::SourceFormat, "torch-snapshot");
    m_builder.setMeta(metakey::SourcePath, path);
}

void SnapshotAssembler::fail(const std::string &problem) const
{
    throw ImportError(m_path, problem + ".");
}

std::span<const Value> SnapshotAssembler::expectSequence(const Document &document, const Value &value, const char *what) const
{
    if (value.kind == Kind::Released)
        throw OnePassError(m_path, std::string(what) + " refers back to part of the pickle read and released before");
    if (!value.isSequence())
        fail(std::string("is not a valid memory snapshot: ") + what + " is not a list");
    return document.items(value);
}

void SnapshotAssembler::noteTrailingBytes(std::size_t count)
{
    if (count > 0)
        m_builder.setMeta(metakey::ImportWarnings, std::to_string(count) + " bytes after the end of the pickle were ignored.");
}

std::int16_t SnapshotAssembler::deviceIndex(const Document &document, const Value &dict) const
{
    const std::int64_t index = document.findInteger(dict, "device");
    if (index < 0 || index > INT16_MAX)
        fail("is not a valid memory snapshot: it names the device " + std::to_string(index));
    return static_cast<std::int16_t>(index);
}

std::uint32_t SnapshotAssembler::lane(std::int16_t device, std::uint64_t stream)
{
    // Entries come in runs on one stream: the builder's lookup only when it changes.
    if (m_lastLane && m_lastLane->device == device && m_lastLane->stream == stream)
        return m_lastLane->lane;
    const std::uint32_t id = m_builder.lane(Lane{Device{DeviceType::Cuda, device}, stream});
    m_lastLane = LastLane{device, stream, id};
    return id;
}

std::uint32_t SnapshotAssembler::stackOf(std::uint32_t frames)
{
    const std::uint32_t stack = m_stacks.intern(frames);
    if (stack >= MemoryEvents::kMaxStacks)
        fail("has more distinct call stacks than PeakLens can hold");
    return stack;
}

namespace {
// Memory from before the trace is of its own category unless the file says what it holds.
Category preexistingCategory(Category category)
{
    return category == Category::Unknown ? Category::BeforeTrace : category;
}
} // namespace

Category SnapshotAssembler::categoryOf(const Value *value)
{
    if (!value)
        return Category::Unknown;
    if (value->isInteger())
        return value->bits() < kProfilerCategoryCount ? static_cast<Category>(value->bits()) : Category::Unknown;
    if (!value->isString())
        return Category::Unknown;
    std::string name(value->string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return parseCategory(name).value_or(Category::Unknown);
}

void SnapshotAssembler::readSettings(const Document &document, const Value *settings)
{
    if (!settings || !settings->isDict())
        return;
    if (auto conf = document.findString(*settings, "PYTORCH_CUDA_ALLOC_CONF"); !conf.empty())
        m_builder.setMeta("allocator.conf", std::string(conf));
    if (const Value *expandable = document.find(*settings, "expandable_segments"); expandable && expandable->isInteger())
        m_builder.setMeta("allocator.expandable_segments", expandable->bits() ? "true" : "false");
}

void SnapshotAssembler::readSegments(const Document &document, std::span<const Value> segments)
{
    // Counted before anything is built: a pickle may list one shared segment many times.
    std::size_t blockCount = 0;
    for (const Value &segment : segments) {
        if (const Value *blocks = segment.isDict() ? document.find(segment, "blocks") : nullptr; blocks && blocks->isSequence())
            blockCount += document.itemCount(*blocks);
    }
    LoadBudget::charge(blockCount * sizeof(std::pair<std::uint64_t, Block>) + segments.size() * sizeof(Segment),
                       "segment blocks");
    for (const Value &segment : segments) {
        if (segment.isStandIn())
            throw OnePassError(m_path, "it lists a segment twice");
        if (!segment.isDict())
            fail("is not a valid memory snapshot: a segment is not a dict");
        DeviceState &state = m_devices[deviceIndex(document, segment)];
        state.hasSegments = true;
        state.reservedAtDump += document.findInteger(segment, "total_size");
        const auto stream = static_cast<std::uint64_t>(document.findInteger(segment, "stream"));
        auto blockAddress = static_cast<std::uint64_t>(document.findInteger(segment, "address"));
        MemoryPool pool;
        if (const Value *id = document.find(segment, "segment_pool_id"); id && id->isSequence()) {
            const std::span<const Value> parts = document.items(*id);
            if (parts.size() == 2 && parts[0].isInteger() && parts[1].isInteger())
                pool = MemoryPool{static_cast<std::int64_t>(parts[0].bits()), static_cast<std::int64_t>(parts[1].bits())};
        }
        state.segmentsAtDump.push_back(Segment{blockAddress, document.findInteger(segment, "total_size"), stream, pool});
        // Frames are read wherever they are listed, used or not: another part of the pickle
        // may share them after this one is released.
        m_stacks.read(document, document.find(segment, "frames"));
        const Value *blocks = document.find(segment, "blocks");
        if (!blocks)
            continue;
        for (const Value &block : expectSequence(document, *blocks, "blocks")) {
            if (!block.isDict())
                fail("is not a valid memory snapshot: a block is not a dict");
            const std::int64_t size = document.findInteger(block, "size");
            // Old snapshots have no block address: blocks tile their segment in order.
            const std::uint64_t at = document.find(block, "address")
                                         ? static_cast<std::uint64_t>(document.findInteger(block, "address"))
                                         : blockAddress;
            blockAddress = at + static_cast<std::uint64_t>(size);
            // Trace entries carry the size asked for, not the rounded block size.
            const std::int64_t requested = document.findInteger(block, "requested_size", size);
            std::uint32_t frames = m_stacks.read(document, document.find(block, "frames"));
            const Value *history = document.find(block, "history");
            std::span<const Value> events;
            if (history && history->isSequence())
                events = document.items(*history);
            for (const Value &event : events)
                m_stacks.read(document, event.isDict() ? document.find(event, "frames") : nullptr);
            const std::string_view blockState = document.findString(block, "state");
            if (blockState != "active_allocated" && blockState != "active_pending_free")
                continue;
            // The 2.0 form keeps the allocation's frames in its history.
            if (!document.find(block, "frames") && !events.empty())
                frames = m_stacks.read(document, document.find(events.front(), "frames"));
            const Category category = categoryOf(document.find(block, "category"));
            state.activeAtDump.push_back({at, Block{requested, stackOf(frames), category, stream}});
            state.blockBytesAtDump += size;
        }
    }
}

void SnapshotAssembler::chargeEntries(std::size_t count) const
{
    LoadBudget::charge(count * sizeof(MemoryEvent), "trace entries");
}

void SnapshotAssembler::reserveEvents(std::size_t device, std::size_t count)
{
    traceOf(device).events.reserve(count);
}

void SnapshotAssembler::readDeviceTrace(const Document &document, std::size_t device, std::span<const Value> entries,
                                        std::size_t firstIndex)
{
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Value &entry = entries[i];
        if (entry.isStandIn())
            throw OnePassError(m_path, "it lists a trace entry twice");
        if (!entry.isDict())
            fail("is not a valid memory snapshot: a trace entry is not a dict");
        readEntry(document, device, document.items(entry), firstIndex + i);
    }
}

SnapshotAssembler::DeviceState &SnapshotAssembler::traceOf(std::size_t device)
{
    if (device > static_cast<std::size_t>(INT16_MAX))
        fail("is not a valid memory snapshot: it has traces for " + std::to_string(device + 1) + " devices");
    const auto index = static_cast<std::int16_t>(device);
    // Entries come a device at a time: its state is looked up when the device changes.
    if (!m_lastTrace || m_lastTrace->first != index)
        m_lastTrace = &*m_devices.try_emplace(index).first;
    return m_lastTrace->second;
}

void SnapshotAssembler::readEntry(const Document &document, std::size_t device, std::span<const Value> pairs, std::size_t index)
{
    if ((++m_sawEntries & 0xFFFF) == 0 && m_totalEntries > 0)
        m_progress.tick(0.5 + 0.4 * static_cast<double>(m_sawEntries) / static_cast<double>(m_totalEntries));
    DeviceState &state = traceOf(device);
    const std::int16_t deviceIndex = m_lastTrace->first;
    const EntryFields fields = fieldsOf(pairs);
    const Value *time = fields.time;
    std::int64_t timeNs = static_cast<std::int64_t>(index) * 1000;
    if (time && time->isInteger()) {
        const auto micros = static_cast<std::int64_t>(time->bits());
        if (micros < 0 || micros > INT64_MAX / 1000)
            fail("is not a valid memory snapshot: an entry has the time " + std::to_string(micros) + " us");
        timeNs = micros * 1000;
        m_sawTime = true;
    }
    state.firstTimeNs = std::min(state.firstTimeNs, timeNs);
    const Action action = actionOf(fields.action);
    const std::uint64_t addr = bitsOf(fields.addr);
    const auto size = static_cast<std::int64_t>(bitsOf(fields.size));
    const std::uint64_t stream = bitsOf(fields.stream);
    if (size < 0 || size > TraceBuilder::kMaxEventBytes)
        fail("is not a valid memory snapshot: an entry has the size " + std::to_string(size));
    // Read whatever the action: a later entry may share the list once this one is released.
    const std::uint32_t frames = m_stacks.read(document, fields.frames);

    m_sawHistory = m_sawHistory || action == Action::Alloc || action == Action::Free || action == Action::SegmentAlloc
                   || action == Action::SegmentFree;
    if (action == Action::Alloc) {
        auto [block, inserted] = state.live.tryEmplace(addr);
        if (!inserted) // its free was lost: end the old block here
            state.events.push_back(freeEvent(timeNs, addr, block, deviceIndex));
        // What the entry says beside its frames joins them: a grouping by either reads it there.
        std::uint32_t withContext = frames;
        if (fields.compileContext && fields.compileContext->isString())
            withContext = m_stacks.withContext(withContext, kCompileContextFile, fields.compileContext->string());
        if (fields.userMetadata && fields.userMetadata->isString())
            withContext = m_stacks.withContext(withContext, kUserMetadataFile, fields.userMetadata->string());
        block = Block{size, stackOf(withContext), categoryOf(fields.category), stream};
        state.events.push_back(
            MemoryEvent{timeNs, size, addr, lane(deviceIndex, stream), kNoLayer, block.stack, block.category, Phase::Other});
    } else if (action == Action::Free) {
        const Block *block = state.live.find(addr);
        if (!block) {
            // Allocated before the trace began (or before its ring buffer wrapped). Its
            // frames are the allocation's unless the free recorded its own.
            const std::uint32_t stack = m_stacks.isFreeStack(frames) ? StackTable::kEmptyStack : stackOf(frames);
            const Block block{size, stack, preexistingCategory(categoryOf(fields.category)), stream};
            state.preexisting.push_back(
                MemoryEvent{0, size, addr, lane(deviceIndex, stream), kNoLayer, block.stack, block.category, Phase::Other});
            state.events.push_back(freeEvent(timeNs, addr, block, deviceIndex));
        } else {
            state.events.push_back(freeEvent(timeNs, addr, *block, deviceIndex));
            state.live.erase(addr);
        }
    } else if (action == Action::SegmentAlloc) {
        addReserved(state, timeNs, size, addr, deviceIndex, stream);
    } else if (action == Action::SegmentFree) {
        addReserved(state, timeNs, -size, addr, deviceIndex, stream);
    } else if (action == Action::OutOfMemory || action == Action::Snapshot) {
        m_builder.addMarker(Marker{timeNs, lane(deviceIndex, stream),
                                   action == Action::OutOfMemory ? MarkerKind::OutOfMemory : MarkerKind::Snapshot, size});
        // What cudaMemGetInfo reported free tells a full GPU from a fragmented cache.
        if (const Value *deviceFree = action == Action::OutOfMemory ? Document::findIn(pairs, "device_free") : nullptr;
            deviceFree && deviceFree->isInteger())
            m_deviceFree += Device{DeviceType::Cuda, deviceIndex}.toString() + " " + std::to_string(timeNs) + " "
                            + std::to_string(deviceFree->bits()) + "\n";
    }
}

// One pass over a trace entry's keys: a million entries make this the hot loop.
SnapshotAssembler::EntryFields SnapshotAssembler::fieldsOf(std::span<const Value> pairs)
{
    EntryFields fields;
    for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) {
        const Value &key = pairs[k];
        if (!key.isString())
            continue;
        Field field;
        if (const std::size_t place = k / 2; place < m_knownKeys.size()) {
            KnownKey &known = m_knownKeys[place];
            if (!known.is(key))
                known = KnownKey{{key.text, key.size}, fieldOf(key.string())};
            field = known.field;
        } else {
            field = fieldOf(key.string());
        }
        if (field)
            fields.*field = &pairs[k + 1];
    }
    return fields;
}

SnapshotAssembler::Field SnapshotAssembler::fieldOf(std::string_view key)
{
    static constexpr std::pair<std::string_view, Field> kFields[] = {{"action", &EntryFields::action},
                                                                     {"addr", &EntryFields::addr},
                                                                     {"size", &EntryFields::size},
                                                                     {"stream", &EntryFields::stream},
                                                                     {"time_us", &EntryFields::time},
                                                                     {"frames", &EntryFields::frames},
                                                                     {"category", &EntryFields::category},
                                                                     {"compile_context", &EntryFields::compileContext},
                                                                     {"user_metadata", &EntryFields::userMetadata}};
    for (const auto &[name, field] : kFields) {
        if (key == name)
            return field;
    }
    return nullptr;
}

SnapshotAssembler::Action SnapshotAssembler::actionOf(const Value *value)
{
    if (!value || !value->isString())
        return Action::Other;
    for (const KnownAction &known : m_knownActions) {
        if (known.is(*value))
            return known.action;
    }
    static constexpr std::pair<std::string_view, Action> kActions[] = {{"alloc", Action::Alloc},
                                                                       {"free_completed", Action::Free},
                                                                       {"free", Action::Free},
                                                                       {"segment_alloc", Action::SegmentAlloc},
                                                                       {"segment_map", Action::SegmentAlloc},
                                                                       {"segment_free", Action::SegmentFree},
                                                                       {"segment_unmap", Action::SegmentFree},
                                                                       {"oom", Action::OutOfMemory},
                                                                       {"snapshot", Action::Snapshot}};
    Action action = Action::Other; // free_requested: the block stays allocated until free_completed
    for (const auto &[name, named] : kActions) {
        if (value->string() == name)
            action = named;
    }
    m_knownActions[m_nextKnownAction++ % m_knownActions.size()] = KnownAction{{value->text, value->size}, action};
    return action;
}

MemoryEvent SnapshotAssembler::freeEvent(std::int64_t timeNs, std::uint64_t addr, const Block &block, std::int16_t deviceIndex)
{
    return MemoryEvent{timeNs,         -block.bytes, addr, lane(deviceIndex, block.stream), kNoLayer, StackTable::kEmptyStack,
                       block.category, Phase::Other};
}

void SnapshotAssembler::addReserved(DeviceState &state, std::int64_t timeNs, std::int64_t delta, std::uint64_t addr,
                                    std::int16_t deviceIndex, std::uint64_t stream)
{
    state.reservedNow += delta;
    state.lowestReserved = std::min(state.lowestReserved, state.reservedNow);
    state.reserved.push_back(ReservedEvent{timeNs, delta, addr, lane(deviceIndex, stream)});
}

void SnapshotAssembler::readAnnotations(const Document &document, std::span<const Value> annotations)
{
    std::vector<Annotation> list;
    for (const Value &annotation : annotations) {
        const Value *time = document.find(annotation, "time_us");
        if (!time || !time->isInteger())
            continue;
        const auto micros = static_cast<std::int64_t>(time->bits());
        if (micros < 0 || micros > INT64_MAX / 1000)
            continue;
        list.push_back(Annotation{std::string(document.findString(annotation, "name")),
                                  document.findString(annotation, "stage") == "START", micros * 1000,
                                  deviceIndex(document, annotation)}); // grouped by device
    }
    m_rangesByDevice = addAnnotations(m_builder, std::move(list));
}

std::shared_ptr<const Trace> SnapshotAssembler::finish(bool hasTraces)
{
    if (hasTraces && m_sawHistory)
        m_builder.setMeta("time.source", m_sawTime ? "time_us" : "event index (the snapshot has no time_us)");
    else
        m_builder.setMeta("time.source", "none: the snapshot holds only the state at dump time");
    if (!m_sawHistory) {
        m_builder.setMeta(metakey::History, "none");
        // The allocator's own sizes of the blocks, beside the sizes asked for that the
        // events hold: what torch.cuda.memory_allocated counted at dump time.
        std::string blockBytes;
        for (const auto &[deviceIndex, state] : m_devices) {
            if (state.hasSegments)
                blockBytes +=
                    Device{DeviceType::Cuda, deviceIndex}.toString() + " " + std::to_string(state.blockBytesAtDump) + "\n";
        }
        m_builder.setMeta(metakey::BlockBytesAtDump, blockBytes);
    }
    m_lastTrace = nullptr;
    emitDevices();
    if (!m_deviceFree.empty())
        m_builder.setMeta("oom.device_free", m_deviceFree); // read by analyseOutOfMemory
    if (m_phasedByStacks > 0) {
        m_builder.setMeta("scopes.source", "call stacks: " + std::to_string(m_phasedByStacks) + " allocations phased, "
                                               + std::to_string(m_layeredByStacks) + " in layers of module calls");
        m_builder.setMeta(metakey::Categories, "lifetime");
    }
    return m_builder.finish();
}

std::uint32_t SnapshotAssembler::inPoolAt(const DeviceState &state, std::uint32_t lane, std::uint64_t addr)
{
    // segmentsAtDump is sorted by address (emitDevices).
    const auto &segments = state.segmentsAtDump;
    auto after = std::upper_bound(segments.begin(), segments.end(), addr,
                                  [](std::uint64_t a, const Segment &segment) { return a < segment.addr; });
    if (after == segments.begin())
        return lane;
    const Segment &segment = *std::prev(after);
    if (segment.pool.isDefault() || addr - segment.addr >= static_cast<std::uint64_t>(segment.bytes))
        return lane;
    Lane pooled = m_builder.current().lanes.at(lane);
    pooled.pool = segment.pool;
    return m_builder.lane(pooled);
}

// Hands each device's events to the builder, blocks and segments that pre-exist the
// trace first, at its start, each on the lane of its stream and its segment's pool.
void SnapshotAssembler::emitDevices()
{
    // Room for them all at once: the columns are not copied as they grow.
    std::size_t count = m_builder.current().events.size();
    for (const auto &[deviceIndex, state] : m_devices)
        count += state.events.size() + state.preexisting.size() + state.activeAtDump.size();
    m_builder.reserveEvents(count);
    for (auto &[deviceIndex, state] : m_devices) {
        std::sort(state.segmentsAtDump.begin(), state.segmentsAtDump.end(),
                  [](const Segment &a, const Segment &b) { return a.addr < b.addr; });
        const std::int64_t start = state.firstTimeNs == INT64_MAX ? 0 : state.firstTimeNs;
        for (const auto &[addr, block] : state.activeAtDump) {
            if (state.live.contains(addr))
                continue;
            state.preexisting.push_back(MemoryEvent{0, block.bytes, addr, lane(deviceIndex, block.stream), kNoLayer, block.stack,
                                                    preexistingCategory(block.category), Phase::Other});
        }
        // Segments released during the trace, or still reserved at dump time, that the
        // trace never reserved were there from the start.
        std::int64_t initialReserved = -state.lowestReserved;
        if (state.hasSegments)
            initialReserved = std::max(initialReserved, state.reservedAtDump - state.reservedNow);
        addInitialSegments(state, deviceIndex, start, initialReserved);
        const std::uint32_t beforeTrace = m_builder.stacks().internStack({Frame{std::string(kBeforeTrace), "", 0}});
        for (MemoryEvent event : state.preexisting) {
            event.timeNs = start;
            if (event.stack == StackTable::kEmptyStack)
                event.stack = beforeTrace;
            event.lane = inPoolAt(state, event.lane, event.addr);
            m_builder.addEvent(event);
        }
        if (static_cast<std::size_t>(deviceIndex) < m_rangesByDevice.size())
            assignScopes(state.events, m_rangesByDevice[static_cast<std::size_t>(deviceIndex)]);
        const StackScopesResult scopes = deriveScopesFromStacks(m_builder, state.events);
        // The loss, computed between the model's forward and its backward, is the forward's.
        if (scopes.phased > 0)
            forwardBeforeBackward(m_builder, state.events, std::vector<bool>(state.events.size(), true));
        m_phasedByStacks += scopes.phased;
        m_layeredByStacks += scopes.layered;
        for (MemoryEvent event : state.events) {
            event.lane = inPoolAt(state, event.lane, event.addr);
            m_builder.addEvent(event);
        }
        for (ReservedEvent event : state.reserved) {
            event.lane = inPoolAt(state, event.lane, event.addr);
            m_builder.addReserved(event);
        }
        state = DeviceState{};
    }
}

// Reserves the segments from before the trace at its start, each at its address: the
// ranges the trace releases before it reserves them, then the dump-time segments it
// never touches. The totals stay those of the file's evidence (initialReserved): a range
// that does not fit in them, or has no address, is not placed, and what is left of them
// is reserved at address 0.
void SnapshotAssembler::addInitialSegments(const DeviceState &state, std::int16_t deviceIndex, std::int64_t start,
                                           std::int64_t initialReserved)
{
    struct Piece
    {
        std::uint64_t addr = 0;
        std::int64_t bytes = 0;
        std::optional<std::uint32_t> lane; // a dump-time segment's is made only if it is placed
        std::uint64_t stream = 0;
    };
    // A map node per range that the trace or the dump names, and a piece or two of each.
    LoadBudget::charge((state.reserved.size() + state.segmentsAtDump.size()) * 2 * sizeof(Piece), "segment ranges");
    ClaimedRanges claimed;
    std::vector<Piece> pieces;
    const auto claim = [&](std::uint64_t addr, std::int64_t bytes, bool preexisting, Piece owner) {
        if (addr == 0)
            return;
        for (const auto &[from, to] : claimed.claim(addr, bytes)) {
            if (preexisting)
                pieces.push_back(Piece{from, static_cast<std::int64_t>(to - from), owner.lane, owner.stream});
        }
    };
    // A range belongs to the first thing that names it: reserved first by the trace, it was
    // not there before; released first, it was.
    for (const ReservedEvent &event : state.reserved)
        claim(event.addr, std::abs(event.deltaBytes), event.deltaBytes < 0, Piece{0, 0, event.lane, 0});
    for (const Segment &segment : state.segmentsAtDump)
        claim(segment.addr, segment.bytes, true, Piece{0, 0, std::nullopt, segment.stream});

    std::int64_t unplaced = std::max<std::int64_t>(initialReserved, 0);
    for (const Piece &piece : pieces) {
        if (piece.bytes > unplaced || piece.bytes > TraceBuilder::kMaxEventBytes)
            continue;
        const std::uint32_t pieceLane = piece.lane ? *piece.lane : lane(deviceIndex, piece.stream);
        m_builder.addReserved(ReservedEvent{start, piece.bytes, piece.addr, inPoolAt(state, pieceLane, piece.addr)});
        unplaced -= piece.bytes;
    }
    if (unplaced > 0)
        m_builder.addReserved(ReservedEvent{start, unplaced, 0, lane(deviceIndex, 0)});
}

} // namespace peaklens::pickle
