#include "torchsnapshot.h"

#include "annotationranges.h"
#include "stackscopes.h"
#include "core/error.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace peaklens {

namespace {

using pickle::Document;
using pickle::Value;

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

class SnapshotImporter
{
public:
    SnapshotImporter(const Document &document, const std::string &path, const ImportProgress &progress)
        : m_doc(document)
        , m_path(path)
        , m_progress(progress)
    {
    }

    std::shared_ptr<const Trace> run()
    {
        m_builder.setMeta(metakey::SourceFormat, "torch-snapshot");
        m_builder.setMeta(metakey::SourcePath, m_path);
        if (m_doc.trailingBytes > 0)
            m_builder.setMeta(metakey::ImportWarnings, std::to_string(m_doc.trailingBytes)
                                                           + " bytes after the end of the pickle were ignored.");
        const Value &root = m_doc.root;
        const Value *segments = nullptr;
        const Value *traces = nullptr;
        const Value *annotations = nullptr;
        if (root.isSequence()) {
            const auto items = m_doc.items(root);
            if (!items.empty() && !items.front().isDict())
                fail("is not a PyTorch memory snapshot: it is a list, but not of segments");
            segments = &root; // the oldest form: a bare list of segments
        } else if (root.isDict()) {
            segments = m_doc.find(root, "segments");
            traces = m_doc.find(root, "device_traces");
            annotations = m_doc.find(root, "external_annotations");
            readSettings(m_doc.find(root, "allocator_settings"));
        }
        if (!segments && !traces)
            fail("is not a PyTorch memory snapshot: it has neither \"segments\" nor \"device_traces\"");
        if (segments)
            readSegments(expectSequence(*segments, "segments"));
        if (annotations)
            m_rangesByDevice = addAnnotations(m_builder, readAnnotations(expectSequence(*annotations, "external_annotations")));
        if (traces) {
            const auto &devices = expectSequence(*traces, "device_traces");
            std::size_t total = 0;
            for (const Value &device : devices)
                total += expectSequence(device, "a device trace").size();
            // Counted before anything is built: a pickle may list one shared trace many times.
            LoadBudget::charge(total * sizeof(MemoryEvent), "trace entries");
            m_totalEntries = std::max<std::size_t>(total, 1);
            if (devices.size() > static_cast<std::size_t>(INT16_MAX))
                fail("is not a valid memory snapshot: it has traces for " + std::to_string(devices.size()) + " devices");
            for (std::size_t d = 0; d < devices.size(); ++d)
                readDeviceTrace(static_cast<std::int16_t>(d), m_doc.items(devices[d]));
        }
        if (traces)
            m_builder.setMeta("time.source", m_sawTime || m_sawEntries == 0 ? "time_us"
                                                                            : "event index (the snapshot has no time_us)");
        else
            m_builder.setMeta("time.source", "none: the snapshot holds only the state at dump time");
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
    };

    // Everything known about one device, gathered before events go to the builder so that
    // blocks found to pre-exist the trace can be placed at its start.
    struct DeviceState
    {
        std::vector<MemoryEvent> events;
        std::vector<ReservedEvent> reserved;
        std::vector<MemoryEvent> preexisting;
        std::int64_t preexistingReserved = 0;
        std::unordered_map<std::uint64_t, Block> live;
        std::int64_t reservedNow = 0;
        std::int64_t lowestReserved = 0;
        std::int64_t firstTimeNs = INT64_MAX;
        // Dump-time state, from "segments".
        std::vector<std::pair<std::uint64_t, Block>> activeAtDump;
        std::vector<Segment> segmentsAtDump;
        std::int64_t reservedAtDump = 0;
        bool hasSegments = false;
    };

    [[noreturn]] void fail(const std::string &problem) const { throw ImportError(m_path, problem + "."); }

    std::span<const Value> expectSequence(const Value &value, const char *what) const
    {
        if (!value.isSequence())
            fail(std::string("is not a valid memory snapshot: ") + what + " is not a list");
        return m_doc.items(value);
    }

    std::int64_t integer(const Value &dict, std::string_view key, std::int64_t fallback = 0) const
    {
        const Value *value = m_doc.find(dict, key);
        return value && value->isInteger() ? static_cast<std::int64_t>(value->bits()) : fallback;
    }

    std::uint64_t address(const Value &dict, std::string_view key) const
    {
        const Value *value = m_doc.find(dict, key);
        return value && value->isInteger() ? value->bits() : 0;
    }

    std::string_view text(const Value &dict, std::string_view key) const
    {
        const Value *value = m_doc.find(dict, key);
        return value && value->isString() ? value->string() : std::string_view();
    }

    std::int16_t deviceIndex(const Value &dict) const
    {
        const std::int64_t index = integer(dict, "device");
        if (index < 0 || index > INT16_MAX)
            fail("is not a valid memory snapshot: it names the device " + std::to_string(index));
        return static_cast<std::int16_t>(index);
    }

    DeviceState &device(std::int16_t index) { return m_devices[index]; }

    std::uint32_t lane(std::int16_t device, std::uint64_t stream)
    {
        return m_builder.lane(Lane{Device{DeviceType::Cuda, device}, stream});
    }

    // Frames come innermost first; identical lists are often one shared object, so the
    // stack is looked up by the list's identity before its content.
    std::uint32_t stackOf(const Value *frames)
    {
        if (!frames || !frames->isSequence())
            return StackTable::kEmptyStack;
        if (auto it = m_stackByList.find(frames->container); it != m_stackByList.end())
            return it->second;
        const auto list = m_doc.items(*frames);
        std::uint32_t stack = StackTable::kEmptyStack;
        for (auto it = list.rbegin(); it != list.rend(); ++it)
            stack = m_builder.stacks().internStack(stack, frameOf(*it));
        if (stack >= MemoryEvents::kMaxStacks)
            fail("has more distinct call stacks than PeakLens can hold");
        m_stackByList.emplace(frames->container, stack);
        return stack;
    }

    // A stack recorded by the allocator's free (with context="all"), not by its malloc.
    bool isFreeStack(const Value *frames) const
    {
        if (!frames || !frames->isSequence())
            return false;
        for (const Value &frame : m_doc.items(*frames)) {
            if (!frame.isDict())
                continue;
            const std::string_view name = text(frame, "name");
            if (name.find("CachingAllocator") == std::string_view::npos)
                continue;
            // The innermost allocator frame says which way the allocator was going.
            return name.find("::malloc(") == std::string_view::npos && name.find("::allocate(") == std::string_view::npos;
        }
        return false;
    }

    std::uint32_t frameOf(const Value &frame)
    {
        if (!frame.isDict())
            return m_builder.stacks().internFrame(Frame{"?", "", 0});
        if (auto it = m_frameByDict.find(frame.container); it != m_frameByDict.end())
            return it->second;
        const std::uint32_t id = m_builder.stacks().internFrame(
            Frame{std::string(text(frame, "name")), std::string(text(frame, "filename")),
                  static_cast<std::int32_t>(integer(frame, "line"))});
        m_frameByDict.emplace(frame.container, id);
        return id;
    }

    Category categoryOf(const Value &entry) const { return categoryOf(m_doc.find(entry, "category")); }

    static Category categoryOf(const Value *value)
    {
        if (!value)
            return Category::Unknown;
        if (value->isInteger())
            return value->bits() < kCategoryCount ? static_cast<Category>(value->bits()) : Category::Unknown;
        if (!value->isString())
            return Category::Unknown;
        std::string name(value->string());
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        return parseCategory(name).value_or(Category::Unknown);
    }

    void readSettings(const Value *settings)
    {
        if (!settings || !settings->isDict())
            return;
        if (auto conf = text(*settings, "PYTORCH_CUDA_ALLOC_CONF"); !conf.empty())
            m_builder.setMeta("allocator.conf", std::string(conf));
        if (const Value *expandable = m_doc.find(*settings, "expandable_segments"); expandable && expandable->isInteger())
            m_builder.setMeta("allocator.expandable_segments", expandable->bits() ? "true" : "false");
    }

    void readSegments(std::span<const Value> segments)
    {
        // Counted before anything is built: a pickle may list one shared segment many times.
        std::size_t blockCount = 0;
        for (const Value &segment : segments) {
            if (const Value *blocks = segment.isDict() ? m_doc.find(segment, "blocks") : nullptr; blocks && blocks->isSequence())
                blockCount += m_doc.items(*blocks).size();
        }
        LoadBudget::charge(blockCount * sizeof(std::pair<std::uint64_t, Block>) + segments.size() * sizeof(Segment),
                           "segment blocks");
        for (const Value &segment : segments) {
            if (!segment.isDict())
                fail("is not a valid memory snapshot: a segment is not a dict");
            DeviceState &state = device(deviceIndex(segment));
            state.hasSegments = true;
            state.reservedAtDump += integer(segment, "total_size");
            const std::uint64_t stream = address(segment, "stream");
            std::uint64_t blockAddress = address(segment, "address");
            state.segmentsAtDump.push_back(Segment{blockAddress, integer(segment, "total_size"), stream});
            const Value *blocks = m_doc.find(segment, "blocks");
            if (!blocks)
                continue;
            for (const Value &block : expectSequence(*blocks, "blocks")) {
                if (!block.isDict())
                    fail("is not a valid memory snapshot: a block is not a dict");
                const std::int64_t size = integer(block, "size");
                // Old snapshots have no block address: blocks tile their segment in order.
                const std::uint64_t at = m_doc.find(block, "address") ? address(block, "address") : blockAddress;
                blockAddress = at + static_cast<std::uint64_t>(size);
                // Trace entries carry the size asked for, not the rounded block size.
                const std::int64_t requested = integer(block, "requested_size", size);
                const std::string_view blockState = text(block, "state");
                if (blockState != "active_allocated" && blockState != "active_pending_free")
                    continue;
                const Value *frames = m_doc.find(block, "frames");
                if (!frames) {
                    // The 2.0 form keeps the allocation's frames in its history.
                    if (const Value *history = m_doc.find(block, "history");
                        history && history->isSequence() && !m_doc.items(*history).empty())
                        frames = m_doc.find(m_doc.items(*history).front(), "frames");
                }
                state.activeAtDump.push_back({at, Block{requested, stackOf(frames), categoryOf(block), stream}});
            }
        }
    }

    void readDeviceTrace(std::int16_t deviceIndex, std::span<const Value> entries)
    {
        DeviceState &state = device(deviceIndex);
        state.events.reserve(state.events.size() + entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if ((++m_sawEntries & 0xFFFF) == 0)
                m_progress.tick(0.5 + 0.4 * static_cast<double>(m_sawEntries) / static_cast<double>(m_totalEntries));
            const Value &entry = entries[i];
            if (!entry.isDict())
                fail("is not a valid memory snapshot: a trace entry is not a dict");
            const EntryFields fields = fieldsOf(entry);
            const Value *time = fields.time;
            std::int64_t timeNs = static_cast<std::int64_t>(i) * 1000;
            if (time && time->isInteger()) {
                const auto micros = static_cast<std::int64_t>(time->bits());
                if (micros < 0 || micros > INT64_MAX / 1000)
                    fail("is not a valid memory snapshot: an entry has the time " + std::to_string(micros) + " us");
                timeNs = micros * 1000;
                m_sawTime = true;
            }
            state.firstTimeNs = std::min(state.firstTimeNs, timeNs);
            const std::string_view action = fields.action && fields.action->isString() ? fields.action->string() : "";
            const std::uint64_t addr = bitsOf(fields.addr);
            const auto size = static_cast<std::int64_t>(bitsOf(fields.size));
            const std::uint64_t stream = bitsOf(fields.stream);
            if (size < 0 || size > TraceBuilder::kMaxEventBytes)
                fail("is not a valid memory snapshot: an entry has the size " + std::to_string(size));

            if (action == "alloc") {
                auto [it, inserted] = state.live.try_emplace(addr);
                if (!inserted) // its free was lost: end the old block here
                    state.events.push_back(freeEvent(timeNs, addr, it->second, deviceIndex));
                it->second = Block{size, stackOf(fields.frames), categoryOf(fields.category), stream};
                state.events.push_back(MemoryEvent{timeNs, size, addr, lane(deviceIndex, stream), kNoLayer,
                                                   it->second.stack, it->second.category, Phase::Other});
            } else if (action == "free_completed" || action == "free") {
                auto it = state.live.find(addr);
                if (it == state.live.end()) {
                    // Allocated before the trace began (or before its ring buffer wrapped). Its
                    // frames are the allocation's unless the free recorded its own.
                    const std::uint32_t stack = isFreeStack(fields.frames) ? StackTable::kEmptyStack : stackOf(fields.frames);
                    const Block block{size, stack, categoryOf(fields.category), stream};
                    state.preexisting.push_back(MemoryEvent{0, size, addr, lane(deviceIndex, stream), kNoLayer,
                                                            block.stack, block.category, Phase::Other});
                    state.events.push_back(freeEvent(timeNs, addr, block, deviceIndex));
                } else {
                    state.events.push_back(freeEvent(timeNs, addr, it->second, deviceIndex));
                    state.live.erase(it);
                }
            } else if (action == "segment_alloc" || action == "segment_map") {
                addReserved(state, timeNs, size, addr, deviceIndex, stream);
            } else if (action == "segment_free" || action == "segment_unmap") {
                addReserved(state, timeNs, -size, addr, deviceIndex, stream);
            } else if (action == "oom" || action == "snapshot") {
                m_builder.addMarker(Marker{timeNs, lane(deviceIndex, stream),
                                           action == "oom" ? MarkerKind::OutOfMemory : MarkerKind::Snapshot, size});
                // What cudaMemGetInfo reported free tells a full GPU from a fragmented cache.
                if (const Value *deviceFree = action == "oom" ? m_doc.find(entry, "device_free") : nullptr;
                    deviceFree && deviceFree->isInteger())
                    m_deviceFree += Device{DeviceType::Cuda, deviceIndex}.toString() + " " + std::to_string(timeNs) + " "
                                    + std::to_string(deviceFree->bits()) + "\n";
            }
            // free_requested: the block stays allocated until free_completed.
        }
    }

    struct EntryFields
    {
        const Value *action = nullptr, *addr = nullptr, *size = nullptr, *stream = nullptr, *time = nullptr,
                    *frames = nullptr, *category = nullptr;
    };

    // One pass over a trace entry's keys: a million entries make this the hot loop.
    EntryFields fieldsOf(const Value &entry) const
    {
        EntryFields fields;
        const std::span<const Value> pairs = m_doc.items(entry);
        for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) {
            if (!pairs[k].isString())
                continue;
            const std::string_view key = pairs[k].string();
            const Value *value = &pairs[k + 1];
            if (key == "action")
                fields.action = value;
            else if (key == "addr")
                fields.addr = value;
            else if (key == "size")
                fields.size = value;
            else if (key == "stream")
                fields.stream = value;
            else if (key == "time_us")
                fields.time = value;
            else if (key == "frames")
                fields.frames = value;
            else if (key == "category")
                fields.category = value;
        }
        return fields;
    }

    static std::uint64_t bitsOf(const Value *value) { return value && value->isInteger() ? value->bits() : 0; }

    MemoryEvent freeEvent(std::int64_t timeNs, std::uint64_t addr, const Block &block, std::int16_t deviceIndex)
    {
        return MemoryEvent{timeNs, -block.bytes, addr, lane(deviceIndex, block.stream), kNoLayer, StackTable::kEmptyStack,
                           block.category, Phase::Other};
    }

    void addReserved(DeviceState &state, std::int64_t timeNs, std::int64_t delta, std::uint64_t addr,
                     std::int16_t deviceIndex, std::uint64_t stream)
    {
        state.reservedNow += delta;
        state.lowestReserved = std::min(state.lowestReserved, state.reservedNow);
        state.reserved.push_back(ReservedEvent{timeNs, delta, addr, lane(deviceIndex, stream)});
    }

    // Hands each device's events to the builder, blocks and segments that pre-exist the
    // trace first, at its start.
    void emitDevices()
    {
        for (auto &[deviceIndex, state] : m_devices) {
            const std::int64_t start = state.firstTimeNs == INT64_MAX ? 0 : state.firstTimeNs;
            for (const auto &[addr, block] : state.activeAtDump) {
                if (state.live.count(addr))
                    continue;
                state.preexisting.push_back(MemoryEvent{0, block.bytes, addr, lane(deviceIndex, block.stream), kNoLayer,
                                                        block.stack, block.category, Phase::Other});
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
                m_builder.addEvent(event);
            }
            if (static_cast<std::size_t>(deviceIndex) < m_rangesByDevice.size())
                assignScopes(state.events, m_rangesByDevice[static_cast<std::size_t>(deviceIndex)]);
            const StackScopesResult scopes = deriveScopesFromStacks(m_builder, state.events);
            m_phasedByStacks += scopes.phased;
            m_layeredByStacks += scopes.layered;
            for (const MemoryEvent &event : state.events)
                m_builder.addEvent(event);
            for (const ReservedEvent &event : state.reserved)
                m_builder.addReserved(event);
            state = DeviceState{};
        }
    }

    // Reserves the segments from before the trace at its start, each at its address: the
    // ranges the trace releases before it reserves them, then the dump-time segments it
    // never touches. The totals stay those of the file's evidence (initialReserved): a range
    // that does not fit in them, or has no address, is not placed, and what is left of them
    // is reserved at address 0.
    void addInitialSegments(const DeviceState &state, std::int16_t deviceIndex, std::int64_t start,
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
            m_builder.addReserved(
                ReservedEvent{start, piece.bytes, piece.addr, piece.lane ? *piece.lane : lane(deviceIndex, piece.stream)});
            unplaced -= piece.bytes;
        }
        if (unplaced > 0)
            m_builder.addReserved(ReservedEvent{start, unplaced, 0, lane(deviceIndex, 0)});
    }

    std::vector<Annotation> readAnnotations(std::span<const Value> annotations) const
    {
        std::vector<Annotation> list;
        for (const Value &annotation : annotations) {
            const Value *time = m_doc.find(annotation, "time_us");
            if (!time || !time->isInteger())
                continue;
            const auto micros = static_cast<std::int64_t>(time->bits());
            if (micros < 0 || micros > INT64_MAX / 1000)
                continue;
            list.push_back(Annotation{std::string(text(annotation, "name")), text(annotation, "stage") == "START",
                                      micros * 1000, deviceIndex(annotation)}); // grouped by device
        }
        return list;
    }

    const Document &m_doc;
    const std::string &m_path;
    const ImportProgress &m_progress;
    TraceBuilder m_builder;
    std::map<std::int16_t, DeviceState> m_devices;
    std::vector<std::vector<Range>> m_rangesByDevice;
    std::unordered_map<std::uint32_t, std::uint32_t> m_stackByList;
    std::unordered_map<std::uint32_t, std::uint32_t> m_frameByDict;
    std::size_t m_totalEntries = 1;
    std::size_t m_sawEntries = 0;
    bool m_sawTime = false;
    std::string m_deviceFree; // one "DEVICE TIME_NS BYTES" line per OOM that carries it
    std::size_t m_phasedByStacks = 0;
    std::size_t m_layeredByStacks = 0;
};

} // namespace

std::shared_ptr<const Trace> importTorchSnapshot(const pickle::Document &document, const std::string &path,
                                                 const ImportProgress &progress)
{
    return SnapshotImporter(document, path, progress).run();
}

} // namespace peaklens
