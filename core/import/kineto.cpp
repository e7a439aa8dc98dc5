// SPDX-License-Identifier: Apache-2.0
#include "kineto.h"

#include "annotationranges.h"
#include "core/error.h"
#include "core/serialworker.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"
#include "core/trace/units.h"
#include "jsonarraypieces.h"
#include "jsonscanner.h"
#include "kinetokernels.h"
#include "kinetomemory.h"
#include "spanstacks.h"
#include "stackscopes.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace peaklens {

namespace {

// Pieces of a megabyte: of 512 KiB to 4 MiB, among the fastest on the 500 MB benchmark trace
// (tests/bench/run_import_bench.sh).
constexpr std::size_t kPieceBytes = 1u << 20;
// Bounds that keep base + ts + dur, in nanoseconds, inside 64 bits: about 63 years of
// microseconds, and epoch nanoseconds up to the year 2065.
constexpr double kMaxMicros = 2e15;
constexpr std::int64_t kMaxBaseNs = 3'000'000'000'000'000'000;
constexpr std::string_view kModulePrefix = "nn.Module: ";
// Kineto's GPU rows are numbered by device; a larger pid is a process.
constexpr std::int64_t kMaxGpuRow = 256;
constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function: ";

struct Span
{
    std::int64_t beginNs;
    std::int64_t endNs;
    std::string name;
};

// 2021 traces name the autograd nodes themselves ("NllLossBackward", "AddmmBackward",
// "torch::autograd::AccumulateGrad") rather than evaluate_function spans around them.
bool isAutogradNodeName(std::string_view name)
{
    if (name.starts_with("torch::autograd::AccumulateGrad"))
        return true;
    while (!name.empty() && name.back() >= '0' && name.back() <= '9')
        name.remove_suffix(1);
    return name.ends_with("Backward") && name.find("::") == std::string_view::npos;
}

class KinetoImporter
{
public:
    KinetoImporter(FileBytes &bytes, const std::string &path, const Progress &progress)
        : m_bytes(bytes)
        , m_path(path)
        , m_progress(progress)
    {
        m_builder.setMeta(metakey::SourceFormat, "kineto");
        m_builder.setMeta(metakey::SourcePath, path);
    }

    std::shared_ptr<const Trace> run()
    {
        JsonScanner scanner(m_bytes.view(), m_path);
        scanner.expect('{');
        bool sawEvents = false;
        if (!scanner.consume('}')) {
            do {
                const std::string_view key = scanner.readString();
                scanner.expect(':');
                scanner.skipWhitespace();
                const std::size_t valueStart = scanner.position();
                if (key == "traceEvents") {
                    readEvents(scanner);
                    sawEvents = true;
                    continue;
                }
                scanner.skipValue();
                const std::string_view value = m_bytes.view().substr(valueStart, scanner.position() - valueStart);
                if (key == "baseTimeNanoseconds") {
                    std::from_chars(value.data(), value.data() + value.size(), m_baseNs);
                    if (m_baseNs < 0 || m_baseNs > kMaxBaseNs)
                        fail("its baseTimeNanoseconds is out of range", valueStart);
                } else if (key == "deviceProperties")
                    readDeviceName(valueStart, value.size());
                else if (key == "roctracer_version" || key == "hip_runtime_version")
                    m_rocm = true;
            } while (scanner.consume(','));
            scanner.expect('}');
        }
        scanner.skipWhitespace();
        if (!scanner.atEnd())
            m_builder.setMeta(metakey::ImportWarnings, std::to_string(m_bytes.size() - scanner.position())
                                                           + " bytes after the end of the JSON were ignored.");
        if (!sawEvents)
            throw ImportError(m_path, "is JSON, but not a Kineto trace: it has no \"traceEvents\".");
        finish();
        return m_builder.finish();
    }

private:
    [[noreturn]] void fail(const std::string &problem, std::size_t offset) const
    {
        throw ImportError(m_path, "is not a valid Kineto trace: " + problem, offset);
    }

    void readDeviceName(std::size_t offset, std::size_t length)
    {
        simdjson::dom::parser parser;
        simdjson::dom::element devices;
        if (parser.parse(m_bytes.data() + offset, length, false).get(devices))
            return;
        simdjson::dom::array list;
        std::string_view name;
        if (devices.get_array().get(list))
            return;
        if (list.size() > 0 && !list.at(0)["name"].get_string().get(name))
            m_builder.setMeta(metakey::DeviceName, std::string(name));
        for (simdjson::dom::element device : list) {
            std::int64_t id = 0, bytes = 0;
            if (!device["id"].get_int64().get(id) && !device["totalGlobalMem"].get_int64().get(bytes) && bytes > 0)
                m_deviceMemory[id] = bytes;
        }
    }

    // device.memory: what the GPUs that hold the trace's memory events can hold, when the
    // header says it and they agree.
    void describeDeviceMemory(const std::vector<MemoryEvent> &events)
    {
        const auto &lanes = m_builder.current().lanes;
        std::set<std::int64_t> capacities;
        std::vector<bool> seen(lanes.size());
        for (const MemoryEvent &event : events) {
            if (event.lane >= seen.size() || seen[event.lane])
                continue;
            seen[event.lane] = true;
            const Device device = lanes[event.lane].device;
            if (device.type != DeviceType::Cuda)
                continue;
            const auto capacity = m_deviceMemory.find(device.index);
            if (capacity == m_deviceMemory.end())
                return;
            capacities.insert(capacity->second);
        }
        if (capacities.size() == 1)
            m_builder.setMeta(metakey::DeviceMemory, std::to_string(*capacities.begin()));
    }

    // The pieces are parsed on a worker while the piece before is read here, in order: two
    // parsers take turns, each holding its piece's document until it is read. A parsed
    // piece's text is not needed again (the document holds copies), so a mapped file's
    // pages leave memory behind the parser: the import holds a few pieces of the file, not
    // all of it.
    void readEvents(JsonScanner &scanner)
    {
        if (scanner.peek() != '[')
            fail("\"traceEvents\" is not a list", scanner.position());
        readArrayInPieces({m_bytes.data(), m_bytes.size()}, scanner, kPieceBytes,
                          [&](std::size_t offset, std::size_t length, bool exact) {
                              m_progress.tick(static_cast<double>(offset) / static_cast<double>(m_bytes.size()));
                              return parsePiece(offset, length, exact);
                          });
        readParsedPiece();
    }

    // A piece cut at a guessed boundary (not exact) may not parse: false. One cut exactly
    // must, or the trace is broken.
    bool parsePiece(std::size_t offset, std::size_t length, bool exact)
    {
        simdjson::dom::parser &parser = m_parsers[m_piecesParsed % 2];
        simdjson::error_code error = simdjson::SUCCESS;
        simdjson::dom::element piece;
        m_worker.runBeside(
            [&] {
                m_bytes.willRead(offset, length);
                error = parser.parse(m_bytes.data() + offset, length, false).get(piece);
            },
            [this] { readParsedPiece(); }); // the piece before, held by the other parser
        if (error) {
            if (!exact)
                return false;
            fail(simdjson::error_message(error), offset);
        }
        ++m_piecesParsed;
        m_parsedPiece = std::pair(piece, offset);
        // Its last byte, the separator, opens the next piece: its page stays.
        m_bytes.doneReading(offset, length - 1);
        return true;
    }

    void readParsedPiece()
    {
        if (auto parsed = std::exchange(m_parsedPiece, std::nullopt))
            readPiece(parsed->first, parsed->second);
    }

    void readPiece(simdjson::dom::element piece, std::size_t offset)
    {
        simdjson::dom::array events;
        if (piece.get_array().get(events))
            fail("\"traceEvents\" is not a list", offset);
        for (simdjson::dom::element element : events) {
            simdjson::dom::object event;
            if (element.get_object().get(event))
                fail("a trace event is not an object", offset);
            readEvent(event, offset);
        }
    }

    // Exact for integral microseconds even at epoch magnitudes, where a double holding
    // nanoseconds would round to 256 ns.
    static std::int64_t microsToNs(double micros)
    {
        const double whole = std::floor(micros);
        return static_cast<std::int64_t>(whole) * 1000 + std::llround((micros - whole) * 1000.0);
    }

    static std::string_view stringOf(simdjson::dom::element value)
    {
        std::string_view text;
        return value.get_string().get(text) ? std::string_view() : text;
    }

    static bool number(simdjson::dom::element value, double &out)
    {
        return !value.get_double().get(out); // integers convert too
    }

    static std::optional<std::int64_t> optionalIntegerOf(simdjson::dom::element value)
    {
        std::int64_t signedValue = 0;
        std::uint64_t unsignedValue = 0;
        double real = 0;
        if (!value.get_int64().get(signedValue))
            return signedValue;
        if (!value.get_uint64().get(unsignedValue))
            return static_cast<std::int64_t>(unsignedValue);
        if (!value.get_double().get(real) && std::isfinite(real) && std::fabs(real) < 9e18)
            return static_cast<std::int64_t>(std::llround(real));
        return std::nullopt;
    }

    static std::int64_t integerOf(simdjson::dom::element value) { return optionalIntegerOf(value).value_or(0); }

    // pid and tid are numbers or strings; either way their text identifies the thread.
    static std::string_view identity(simdjson::dom::element value, std::string &storage)
    {
        if (value.is_string())
            return stringOf(value);
        std::int64_t number = 0;
        if (!value.get_int64().get(number)) {
            storage = std::to_string(number);
            return storage;
        }
        storage = simdjson::minify(value);
        return storage;
    }

    void readEvent(simdjson::dom::object event, std::size_t offset)
    {
        std::string_view ph, name, cat;
        // A default element is no value at all: absent fields stay empty optionals.
        std::optional<simdjson::dom::element> pid, tid, args;
        double ts = 0, dur = 0;
        bool hasTs = false;
        // Millions of events: dispatch on the key's length and first letter, then compare once.
        for (auto field : event) {
            const std::string_view key = field.key;
            if (key.size() < 2 || key.size() > 4)
                continue;
            switch (key.size() * 256 + static_cast<unsigned char>(key[0])) {
            case 2 * 256 + 'p':
                if (equalsLiteral(key, "ph"))
                    ph = stringOf(field.value);
                break;
            case 2 * 256 + 't':
                if (equalsLiteral(key, "ts"))
                    hasTs = number(field.value, ts);
                break;
            case 3 * 256 + 'c':
                if (equalsLiteral(key, "cat"))
                    cat = stringOf(field.value);
                break;
            case 3 * 256 + 'd':
                if (equalsLiteral(key, "dur"))
                    number(field.value, dur);
                break;
            case 3 * 256 + 'p':
                if (equalsLiteral(key, "pid"))
                    pid = field.value;
                break;
            case 3 * 256 + 't':
                if (equalsLiteral(key, "tid"))
                    tid = field.value;
                break;
            case 4 * 256 + 'n':
                if (equalsLiteral(key, "name"))
                    name = stringOf(field.value);
                break;
            case 4 * 256 + 'a':
                if (equalsLiteral(key, "args"))
                    args = field.value;
                break;
            default:
                break;
            }
        }
        if (!hasTs)
            return;
        if (!std::isfinite(ts) || std::fabs(ts) > kMaxMicros || !std::isfinite(dur) || std::fabs(dur) > kMaxMicros)
            fail("a trace event has the time " + std::to_string(ts) + " us", offset);
        const std::int64_t beginNs = microsToNs(ts);
        const std::int64_t endNs = beginNs + microsToNs(dur);
        m_memory.setTraceBegin(beginNs);

        if (equalsLiteral(name, "[memory]") || equalsLiteral(name, "[OutOfMemory]")) {
            readMemoryEvent(equalsLiteral(name, "[memory]"), beginNs, threadOf(pid, tid), args, offset);
        } else if (equalsLiteral(ph, "X") && KinetoKernels::isGpuActivity(cat)) {
            readGpuActivity(name, beginNs, endNs, pid, tid, args);
        } else if (equalsLiteral(ph, "X") && endNs > beginNs) {
            if (equalsLiteral(cat, "python_function") && name.starts_with(kModulePrefix)) {
                m_modules[threadOf(pid, tid)].push_back(Span{beginNs, endNs, std::string(name.substr(kModulePrefix.size()))});
            } else if (equalsLiteral(cat, "python_function")) { // with_stack: a Python frame
                m_stacks.add(threadOf(pid, tid), beginNs, endNs, m_builder.stacks().internFrame(SpanStacks::frameOf(name)));
            } else if (equalsLiteral(cat, "user_annotation") || equalsLiteral(cat, "cpu_op")
                       || equalsLiteral(cat, "Operator")) { // "Operator": PyTorch 1.8
                if (name.starts_with(kBackwardPrefix) || isAutogradNodeName(name))
                    addSpan(threadOf(pid, tid), beginNs, endNs, "bwd");
                else if (const AnnotationScope scope = parseAnnotation(name);
                         scope.step || scope.phase != Phase::Other || equalsLiteral(cat, "user_annotation"))
                    addSpan(threadOf(pid, tid), beginNs, endNs, std::string(name)); // a user's annotation: a stage
                if (cat != "user_annotation") // an operator: the innermost frames of a stack
                    m_stacks.add(threadOf(pid, tid), beginNs, endNs,
                                 m_builder.stacks().internFrame(Frame{std::string(name), "", 0}));
            }
        }
    }

    // A GPU row names its device in "device" and its stream in "stream"; without them, the
    // row itself: its pid is the device (a small number, unlike a process id), its tid the stream.
    void readGpuActivity(std::string_view name, std::int64_t beginNs, std::int64_t endNs,
                         const std::optional<simdjson::dom::element> &pid, const std::optional<simdjson::dom::element> &tid,
                         const std::optional<simdjson::dom::element> &args)
    {
        std::optional<std::int64_t> device, stream;
        simdjson::dom::object fields;
        if (args && !args->get_object().get(fields)) {
            for (auto field : fields) {
                if (equalsLiteral(field.key, "device"))
                    device = optionalIntegerOf(field.value);
                else if (equalsLiteral(field.key, "stream"))
                    stream = optionalIntegerOf(field.value);
            }
        }
        if (!device && pid && !pid->is_string()) {
            if (const auto row = optionalIntegerOf(*pid); row && *row < kMaxGpuRow)
                device = row;
        }
        if (!stream && tid) {
            std::string storage;
            if (const auto fromThread = KinetoKernels::streamOfThread(identity(*tid, storage));
                fromThread && *fromThread <= INT64_MAX)
                stream = static_cast<std::int64_t>(*fromThread);
        }
        m_kernels.add(m_builder, name, beginNs, endNs, device, stream);
    }

    void addSpan(std::int32_t thread, std::int64_t beginNs, std::int64_t endNs, std::string name)
    {
        LoadBudget::charge(2 * (name.size() + sizeof(Annotation)), "module and phase spans");
        m_annotations.push_back(Annotation{name, true, beginNs, thread});
        m_annotations.push_back(Annotation{std::move(name), false, endNs, thread});
    }

    std::int32_t threadOf(const std::optional<simdjson::dom::element> &pid, const std::optional<simdjson::dom::element> &tid)
    {
        // Most traces number their threads, and have few: those are found without their text.
        std::int64_t pidNumber = 0, tidNumber = 0;
        const bool numbers = pid && tid && !pid->get_int64().get(pidNumber) && !tid->get_int64().get(tidNumber);
        if (numbers) {
            for (const NumberedThread &known : m_numberedThreads) {
                if (known.pid == pidNumber && known.tid == tidNumber)
                    return known.id;
            }
        }
        std::string pidStorage, tidStorage;
        const std::string_view pidText = pid ? identity(*pid, pidStorage) : std::string_view();
        const std::string_view tidText = tid ? identity(*tid, tidStorage) : std::string_view();
        m_threadKey.assign(pidText).append("/").append(tidText);
        auto it = m_threads.find(m_threadKey);
        if (it == m_threads.end())
            it = m_threads.emplace(m_threadKey, static_cast<std::int32_t>(m_threads.size())).first;
        if (numbers && m_numberedThreads.size() < kNumberedThreads)
            m_numberedThreads.push_back(NumberedThread{pidNumber, tidNumber, it->second});
        return it->second;
    }

    void readMemoryEvent(bool allocation, std::int64_t timeNs, std::int32_t thread,
                         const std::optional<simdjson::dom::element> &args, std::size_t offset)
    {
        simdjson::dom::object fields;
        if (!args || args->get_object().get(fields))
            fail("a memory event has no args", offset);
        KinetoMemory::Record record;
        record.timeNs = timeNs;
        record.thread = thread;
        record.hasAddress = false;
        std::int64_t deviceType = 1, deviceId = 0;
        for (auto field : fields) {
            const std::string_view key = field.key;
            if (equalsLiteral(key, "Addr")) {
                record.addr = static_cast<std::uint64_t>(integerOf(field.value));
                record.hasAddress = true;
            } else if (equalsLiteral(key, "Bytes"))
                record.bytes = integerOf(field.value);
            else if (equalsLiteral(key, "Total Allocated"))
                record.totalAllocated = std::max<std::int64_t>(0, integerOf(field.value));
            else if (equalsLiteral(key, "Total Reserved"))
                record.totalReserved = std::max<std::int64_t>(0, integerOf(field.value));
            else if (equalsLiteral(key, "Device Type"))
                deviceType = integerOf(field.value);
            else if (equalsLiteral(key, "Device Id"))
                deviceId = integerOf(field.value);
            else if (equalsLiteral(key, "Ev Idx"))
                record.eventIndex = integerOf(field.value);
        }
        // c10's device types: 0 CPU, 1 CUDA, 6 HIP (AMD GPUs, which PyTorch names cuda:N).
        if (deviceType != 0 && deviceType != 1 && deviceType != 6) {
            ++m_skippedOtherDevices;
            return;
        }
        m_sawHip = m_sawHip || deviceType == 6;
        if (deviceType != 0)
            m_kernels.noteMemoryDevice(std::clamp<std::int64_t>(deviceId, 0, INT16_MAX));
        if (record.bytes > TraceBuilder::kMaxEventBytes || record.bytes < -TraceBuilder::kMaxEventBytes
            || record.totalAllocated > TraceBuilder::kMaxEventBytes || record.totalReserved > TraceBuilder::kMaxEventBytes)
            fail("a memory event has the size " + std::to_string(record.bytes), offset);
        const Device device{deviceType == 0 ? DeviceType::Cpu : DeviceType::Cuda,
                            static_cast<std::int16_t>(std::clamp<std::int64_t>(deviceId, 0, INT16_MAX))};
        record.lane = m_builder.lane(Lane{device, 0});
        if (!allocation) {
            m_markers.push_back(Marker{timeNs, record.lane, MarkerKind::OutOfMemory, record.bytes});
            return;
        }
        m_memory.add(record);
    }

    // The module spans and annotations as layers and ranges, by thread.
    std::vector<std::vector<Range>> addRanges()
    {
        addModuleSpans();
        // Times are relative to baseTimeNanoseconds (absolute in older traces).
        for (Annotation &annotation : m_annotations)
            annotation.timeNs += m_baseNs;
        auto rangesByThread = addAnnotations(m_builder, std::move(m_annotations));
        // Module spans are named Class_N: the class is the layer's kind.
        for (std::uint32_t l = 0; l < m_builder.current().layers.size(); ++l) {
            const std::string_view name = m_builder.current().layers[l].name();
            if (const auto underscore = name.rfind('_'); underscore != std::string_view::npos && underscore > 0)
                m_builder.setLayerInfo(l, std::string(name.substr(0, underscore)), 0);
        }
        return rangesByThread;
    }

    // Module spans nest into paths ("GPT_0.Block_3.Linear_0"); each becomes a forward range.
    void addModuleSpans()
    {
        for (auto &[thread, spans] : m_modules) {
            std::stable_sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
                return a.beginNs < b.beginNs || (a.beginNs == b.beginNs && a.endNs > b.endNs);
            });
            std::vector<std::pair<std::int64_t, std::string>> open; // end, path
            for (const Span &span : spans) {
                while (!open.empty() && open.back().first <= span.beginNs)
                    open.pop_back();
                std::string path = open.empty() ? span.name : open.back().second + "." + span.name;
                // Each open span keeps its whole path: bound them before depth times length adds up.
                if (path.size() > TraceBuilder::kMaxLayerPathBytes)
                    throw ImportError(m_path, "is not a valid Kineto trace: module spans nest into a path of more than "
                                                  + std::to_string(TraceBuilder::kMaxLayerPathBytes) + " bytes ("
                                                  + std::to_string(open.size() + 1) + " deep).");
                addSpan(thread, span.beginNs, span.endNs, "fwd:" + path);
                open.emplace_back(span.endNs, std::move(path));
            }
        }
    }

    // Traces recorded with_stack: phases, and layers where no module span names them, from
    // the stacks, one device at a time (the events are grouped by device, in time order).
    void derivePhasesFromStacks(std::vector<MemoryEvent> &events, const std::vector<bool> &recorded)
    {
        if (m_builder.stacks().stackCount() <= 3) // the empty stack and the two of memory from totals
            return;
        StackScopesResult total;
        for (std::size_t begin = 0; begin < events.size();) {
            std::size_t end = begin;
            std::vector<std::size_t> indices;
            for (; end < events.size() && events[end].lane == events[begin].lane; ++end) {
                if (recorded[end])
                    indices.push_back(end);
            }
            std::vector<MemoryEvent> ofLane;
            ofLane.reserve(indices.size());
            for (std::size_t index : indices)
                ofLane.push_back(events[index]);
            const StackScopesResult result = deriveScopesFromStacks(m_builder, ofLane);
            for (std::size_t k = 0; k < indices.size(); ++k)
                events[indices[k]] = ofLane[k];
            total.phased += result.phased;
            total.layered += result.layered;
            begin = end;
        }
        if (total.phased > 0)
            m_builder.setMeta("scopes.source", "call stacks: " + std::to_string(total.phased) + " allocations phased, "
                                                   + std::to_string(total.layered) + " in layers of module calls");
    }

    // Says in the trace's metadata how the events compared with the trace's own totals.
    void describeTotals(const KinetoMemory::Result &memory)
    {
        const auto deviceOf = [&](std::uint32_t lane) { return m_builder.current().lanes[lane].device.toString(); };
        std::string totals, preexisting;
        for (const auto &[lane, check] : memory.totals) {
            if (!totals.empty())
                totals += "; ";
            totals += deviceOf(lane) + ": ";
            if (check.events == 0)
                totals += "all " + formatCount(check.checked) + " events agree with the trace's Total Allocated";
            else
                totals += formatCount(check.events) + " of " + formatCount(check.checked)
                          + " events disagree with the trace's Total Allocated, by " + formatBytes(check.bytes)
                          + " in all (largest " + formatBytes(check.largest) + "); the trace's totals are used";
        }
        for (const auto &[lane, bytes] : memory.preexistingBytes)
            preexisting += (preexisting.empty() ? "" : "; ") + deviceOf(lane) + ": " + formatBytes(bytes);
        if (!totals.empty())
            m_builder.setMeta("import.totals", totals);
        if (!preexisting.empty())
            m_builder.setMeta("import.preexisting", preexisting + " allocated before profiling began");
        if (memory.addressesMissing)
            m_builder.setMeta("import.addresses", "the memory events carry no block addresses (an older PyTorch): the "
                                                  "totals are exact, but frees are matched to the newest blocks");
        if (m_sawHip)
            m_builder.setMeta("device.note", "AMD GPUs (HIP) are shown as cuda:N, as PyTorch names them");
    }

    void finish()
    {
        // The memory events are put in order on the worker while the spans become ranges.
        KinetoMemory::Result memory;
        std::vector<std::vector<Range>> rangesByThread;
        m_worker.runBeside([&] { memory = m_memory.finish(); }, [&] { rangesByThread = addRanges(); });
        describeTotals(memory);
        // Each event takes the innermost range open on its own thread; the order KinetoMemory
        // gave (time, and the place of corrections among equal times) is kept.
        std::vector<MemoryEvent> events;
        events.reserve(memory.events.size());
        std::vector<bool> recorded;
        recorded.reserve(memory.events.size());
        std::vector<std::vector<std::size_t>> eventsOfThread(m_threads.size());
        const std::uint32_t beforeTrace = m_builder.stacks().internStack({Frame{std::string(kBeforeTrace), "", 0}});
        const std::uint32_t totalsOnly = m_builder.stacks().internStack({Frame{std::string(kTotalsOnly), "", 0}});
        for (const KinetoMemory::ThreadEvent &pending : memory.events) {
            events.push_back(pending.event);
            events.back().timeNs += m_baseNs;
            recorded.push_back(pending.origin == KinetoMemory::Origin::Recorded);
            if (pending.origin == KinetoMemory::Origin::Recorded)
                eventsOfThread[static_cast<std::size_t>(pending.thread)].push_back(events.size() - 1);
            else
                events.back().stack = pending.origin == KinetoMemory::Origin::BeforeTrace ? beforeTrace : totalsOnly;
        }
        for (std::size_t thread = 0; thread < eventsOfThread.size(); ++thread) {
            std::vector<std::size_t> &indices = eventsOfThread[thread];
            // A thread's events may come from several devices.
            const auto earlier = [&](std::size_t a, std::size_t b) { return events[a].timeNs < events[b].timeNs; };
            if (!std::is_sorted(indices.begin(), indices.end(), earlier))
                std::stable_sort(indices.begin(), indices.end(), earlier);
            std::vector<MemoryEvent> ofThread;
            ofThread.reserve(indices.size());
            for (std::size_t index : indices)
                ofThread.push_back(events[index]);
            m_stacks.assign(static_cast<std::int32_t>(thread), ofThread, m_builder.stacks(), m_baseNs);
            if (thread < rangesByThread.size())
                assignScopes(ofThread, rangesByThread[thread]);
            for (std::size_t k = 0; k < indices.size(); ++k)
                events[indices[k]] = ofThread[k];
        }
        derivePhasesFromStacks(events, recorded);
        if (const std::size_t given = forwardBeforeBackward(m_builder, events, recorded); given > 0)
            m_builder.setMeta("scopes.forward",
                              std::to_string(given) + " allocations before their step's backward taken as the forward pass");
        if (std::any_of(events.begin(), events.end(), [](const MemoryEvent &e) { return e.phase != Phase::Other; }))
            m_builder.setMeta(metakey::Categories, "lifetime");
        describeDeviceMemory(events);
        for (const MemoryEvent &event : events)
            m_builder.addEvent(event);
        if (m_skippedOtherDevices > 0)
            m_builder.setMeta("import.skipped", std::to_string(m_skippedOtherDevices)
                                                    + " memory events of devices other than CPU and GPU (CUDA or HIP)");
        for (ReservedEvent event : memory.reserved) {
            event.timeNs += m_baseNs;
            m_builder.addReserved(event);
        }
        for (Marker marker : m_markers) {
            marker.timeNs += m_baseNs;
            m_builder.addMarker(marker);
        }
        m_progress.throwIfCancelled();
        m_kernels.finish(m_builder, m_baseNs, m_rocm || m_sawHip);
    }

    FileBytes &m_bytes;
    std::string m_path;
    const Progress &m_progress;
    TraceBuilder m_builder;
    simdjson::dom::parser m_parsers[2];
    SerialWorker m_worker; // parses each piece while the one before is read
    std::size_t m_piecesParsed = 0;
    std::optional<std::pair<simdjson::dom::element, std::size_t>> m_parsedPiece; // parsed, not yet read; its offset
    std::string m_threadKey;
    std::int64_t m_baseNs = 0;
    std::unordered_map<std::string, std::int32_t> m_threads;
    struct NumberedThread
    {
        std::int64_t pid, tid;
        std::int32_t id;
    };
    static constexpr std::size_t kNumberedThreads = 16;
    std::vector<NumberedThread> m_numberedThreads; // the first threads of numbers, searched first
    std::map<std::int32_t, std::vector<Span>> m_modules;
    std::vector<Annotation> m_annotations;
    KinetoMemory m_memory;
    SpanStacks m_stacks;
    std::vector<Marker> m_markers;
    KinetoKernels m_kernels;
    std::int64_t m_skippedOtherDevices = 0;
    bool m_sawHip = false;
    bool m_rocm = false;                                 // the trace's header names ROCm's tracer or runtime
    std::map<std::int64_t, std::int64_t> m_deviceMemory; // device id: totalGlobalMem
};

} // namespace

bool looksLikeKinetoTrace(std::string_view prefix)
{
    const auto start = prefix.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos || prefix[start] != '{')
        return false;
    return prefix.find("\"traceEvents\"") != std::string_view::npos || prefix.find("\"schemaVersion\"") != std::string_view::npos
           || prefix.find("\"displayTimeUnit\"") != std::string_view::npos;
}

std::shared_ptr<const Trace> importKinetoTrace(FileBytes &bytes, const std::string &path, const Progress &progress)
{
    return KinetoImporter(bytes, path, progress).run();
}

} // namespace peaklens
