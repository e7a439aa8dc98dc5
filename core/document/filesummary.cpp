// SPDX-License-Identifier: Apache-2.0
#include "filesummary.h"

#include "core/analysis/lanedevices.h"
#include "core/analysis/liveblocks.h"
#include "core/analysis/spantrace.h"
#include "core/format/outputfile.h"
#include "core/format/schema.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/format/usercache.h"
#include "core/import/remoteread.h"
#include "core/import/traceloader.h"
#include "core/trace/lifetimecategories.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"
#include "core/trace/units.h"
#include "summaryfigures.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace peaklens {

namespace {

// Thrown through the reader to stop a pass whose events turn out not to be in time order.
struct NotInTimeOrder
{ };

// Thrown through the reader to stop a pass over a trace whose categories are worked out
// from lifetimes before they are known.
struct NeedsCategories
{ };

// Categories worked out from lifetimes, one byte per event, kAsStored where the event
// keeps its own: a pass of their own, as a full read works them out once all are read.
constexpr std::uint8_t kAsStored = 0xFF;

std::vector<std::uint8_t> lifetimeCategories(const std::string &path, const Progress &progress)
{
    std::vector<std::uint8_t> categories;
    std::optional<LifetimeClassifier> classifier;
    const auto decide = [&categories](std::size_t index, Category category) {
        categories[index] = static_cast<std::uint8_t>(category);
    };
    // The classifier reads the trace's ranges and steps to its finish: the trace is kept.
    const auto streamed = TraceReader::stream(
        path,
        [&](const Trace &trace, const TraceReader::StreamStart &start) {
            LoadBudget::charge(start.events, "categories");
            categories.assign(start.events, kAsStored);
            classifier.emplace(trace);
            return true;
        },
        [&](const Trace &, MemoryEvents &events, std::size_t first) { classifier->add(events, first, decide); }, progress);
    if (streamed && classifier)
        classifier->finish(decide);
    return categories;
}

// The full read sorts what it reads; a pass in file order equals it only when the file is
// in order, and a span too long for the model is refused there.
class TimeOrder
{
public:
    void check(const MemoryEvents &events, std::size_t first)
    {
        if (first == 0)
            m_firstNs = events.timeNs(0);
        if (events.timeNs(0) < m_lastNs || !events.isSortedByTime()
            || events.timeNs(events.size() - 1) - m_firstNs > TraceBuilder::kMaxSpanNs)
            throw NotInTimeOrder{};
        m_lastNs = events.timeNs(events.size() - 1);
    }

private:
    std::int64_t m_firstNs = 0;
    std::int64_t m_lastNs = INT64_MIN;
};

// Categories worked out from lifetimes laid over the stored ones.
void overlay(const std::vector<std::uint8_t> *categories, MemoryEvents &events, std::size_t first)
{
    if (!categories)
        return;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (const std::uint8_t category = (*categories)[first + i]; category != kAsStored)
            events.setCategory(i, static_cast<Category>(category));
    }
}

// Runs `pass(categories)`; when the trace turns out to need categories worked out from
// lifetimes and `categories` has none yet, works them out and runs it once more.
template<typename Pass>
auto withCategories(const std::string &path, std::optional<std::vector<std::uint8_t>> &categories, const Progress &progress,
                    Pass pass)
{
    for (;;) {
        try {
            return pass(categories ? &*categories : nullptr);
        } catch (const NeedsCategories &) {
            categories = lifetimeCategories(path, progress);
        }
    }
}

std::optional<SummaryScan::Peak> expectedFrom(const std::vector<TotalsPeak> &peaks)
{
    const auto best = primaryPeak(peaks);
    if (!best)
        return std::nullopt;
    return SummaryScan::Peak{best->device, static_cast<std::size_t>(best->eventIndex)};
}

struct Pass
{
    std::shared_ptr<const Trace> trace;
    std::optional<TraceSummary> summary;
    std::optional<SummaryScan::Peak> found;
    bool stored = false;
};

// One pass over the file's events, or none when `figures` allows the stored ones.
// `expected` null: as the file's totals say. Categories worked out from lifetimes are laid
// over the stored ones; without them, a trace that needs them stops the pass.
Pass streamOnce(const std::string &path, const std::optional<std::optional<SummaryScan::Peak>> &expected,
                const std::vector<std::uint8_t> *categories, StoredFigures figures, const Progress &progress)
{
    std::optional<SummaryScan> scan;
    TimeOrder order;
    Pass pass;
    pass.trace = TraceReader::stream(
        path,
        [&](const Trace &trace, const TraceReader::StreamStart &start) {
            if (figures == StoredFigures::Use) {
                if (auto stored = storedSummary(trace, start)) {
                    pass.summary = std::move(stored);
                    pass.stored = true;
                    return false;
                }
            }
            if (!categories && trace.metaValue(metakey::Categories) == "lifetime")
                throw NeedsCategories{};
            scan.emplace(trace, expected ? *expected : expectedFrom(start.peaks));
            return true;
        },
        [&](const Trace &, MemoryEvents &events, std::size_t first) {
            if (events.empty())
                return;
            order.check(events, first);
            overlay(categories, events, first);
            scan->add(events, first);
        },
        progress);
    if (pass.trace && scan) {
        pass.summary = scan->finish();
        pass.found = scan->foundPeak();
    }
    return pass;
}

// Thrown through the reader once a window's events are all read.
struct WindowRead
{ };

// Thrown through the reader when the file's events fit in memory whole.
struct SmallEnough
{ };

// Keeps the events from the chunk holding event `wantedFirst` (or, given `fromNs`, the
// first event at or after that time) on, up to `maxEvents` and the rest of that chunk,
// after the blocks live before them: the events before are applied to a table of live
// blocks as they stream by.
class WindowReader
{
public:
    WindowReader(std::string path, std::size_t wantedFirst, std::size_t maxEvents, const std::vector<std::uint8_t> *categories,
                 std::optional<std::int64_t> fromNs = std::nullopt)
        : m_path(std::move(path))
        , m_wantedFirst(wantedFirst)
        , m_maxEvents(maxEvents)
        , m_categories(categories)
        , m_fromNs(fromNs)
    {
    }

    // Throws WindowRead once the window is full.
    void add(const Trace &trace, MemoryEvents &events, std::size_t first)
    {
        if (events.empty())
            return;
        m_order.check(events, first);
        overlay(m_categories, events, first);
        if (first == 0)
            m_fileFirstNs = events.timeNs(0);
        const bool before = m_fromNs ? events.timeNs(events.size() - 1) < *m_fromNs : first + events.size() <= m_wantedFirst;
        if (!m_first && before) {
            if (!m_lanes)
                m_lanes.emplace(trace);
            for (std::size_t i = 0; i < events.size(); ++i)
                m_live.apply(events, i, first + i, m_lanes->deviceOfLane[events.lane(i)]);
            return;
        }
        if (!m_first) {
            m_first = first;
            const std::vector<LiveBlocks::Block> carried = m_live.blocksInOrder();
            m_live = LiveBlocks();
            LoadBudget::charge((carried.size() + m_maxEvents) * MemoryEvents::kBytesPerEvent, "memory events");
            m_events = carriedThen(carried, events.timeNs(0), events, 0, 0);
            m_events.reserve(carried.size() + m_maxEvents + events.size());
            m_carried = carried.size();
        }
        m_events.append(events, 0, events.size());
        if (m_events.size() - m_carried >= m_maxEvents)
            throw WindowRead{};
    }

    bool started() const { return m_first.has_value(); }

    // The window as a trace of its own: the file's tables, what of its ranges, steps,
    // kernels and markers overlaps the window (read now: the events were streamed without
    // them), and the events read.
    PeakWindow finish(std::size_t fileEvents)
    {
        PeakWindow window;
        window.firstEvent = *m_first;
        window.readEvents = m_events.size() - m_carried;
        window.carriedBlocks = m_carried;
        window.fileEvents = fileEvents;
        const std::int64_t beginNs = m_events.timeNs(0), endNs = m_events.timeNs(m_events.size() - 1);
        const auto tables = TraceReader::readTables(m_path, {beginNs, endNs});
        auto result = spanTrace(*tables, std::move(m_events), beginNs, endNs);
        const auto count = [](std::size_t n) { return formatCount(static_cast<std::int64_t>(n)); };
        const std::string shown =
            count(fileEvents) + " memory events, too many to hold at once: showing the " + count(window.readEvents)
            + (m_fromNs ? std::string(" from the time asked for") : std::string(" around the peak")) + " (events "
            + count(window.firstEvent) + " to " + count(window.firstEvent + window.readEvents - 1) + ", +"
            + formatDuration(beginNs - m_fileFirstNs) + " to +" + formatDuration(endNs - m_fileFirstNs) + "), the "
            + count(m_carried) + " blocks live before them allocated at their start. peaklens-cli summary reads the whole file.";
        std::string &warnings = result->meta[std::string(metakey::ImportWarnings)];
        warnings += (warnings.empty() ? "" : "\n") + shown;
        result->meta[std::string(metakey::Window)] = shown;
        window.trace = std::move(result);
        return window;
    }

private:
    std::string m_path;
    std::size_t m_wantedFirst;
    std::size_t m_maxEvents;
    const std::vector<std::uint8_t> *m_categories;
    std::optional<std::int64_t> m_fromNs;
    TimeOrder m_order;
    std::optional<LaneDevices> m_lanes;
    LiveBlocks m_live;
    std::optional<std::size_t> m_first;
    std::int64_t m_fileFirstNs = 0;
    std::size_t m_carried = 0;
    MemoryEvents m_events;
};

// Whether the window's events reach the totals' peak at its event: the totals and the
// events agree, so the window holds the peak.
bool holdsPeak(const PeakWindow &window, const TotalsPeak &peak)
{
    const Trace &trace = *window.trace;
    if (peak.eventIndex < window.firstEvent || peak.eventIndex - window.firstEvent >= window.readEvents)
        return false;
    const LaneDevices lanes(trace);
    const auto device = lanes.indexOf(peak.device);
    if (!device)
        return false;
    std::int64_t allocated = 0;
    const std::size_t end = window.carriedBlocks + static_cast<std::size_t>(peak.eventIndex - window.firstEvent) + 1;
    for (std::size_t i = 0; i < end; ++i) {
        if (lanes.deviceOfLane[trace.events.lane(i)] == *device)
            allocated += trace.events.deltaBytes(i);
    }
    return allocated == peak.bytes;
}

// One pass up to the end of the window around the totals' peak, or from `fromNs`.
std::optional<PeakWindow> windowOnce(const std::string &path, std::size_t maxEvents, std::size_t wholeUpTo,
                                     const std::vector<std::uint8_t> *categories, const Progress &progress,
                                     std::optional<std::int64_t> fromNs)
{
    std::optional<WindowReader> reader;
    std::optional<TotalsPeak> peak;
    std::optional<PeakWindow> window;
    std::size_t fileEvents = 0;
    try {
        const auto trace = TraceReader::stream(
            path,
            [&](const Trace &trace, const TraceReader::StreamStart &start) {
                if (start.events <= std::max(maxEvents, wholeUpTo))
                    throw SmallEnough{};
                if (!categories && trace.metaValue(metakey::Categories) == "lifetime")
                    throw NeedsCategories{};
                fileEvents = start.events;
                peak = primaryPeak(start.peaks);
                // Centred on the peak where the file allows.
                const std::size_t at = peak ? static_cast<std::size_t>(peak->eventIndex) : 0;
                const std::size_t wanted = std::min(at - std::min(at, maxEvents / 2), fileEvents - maxEvents);
                // A time past the last chunk's start is its start: the window is never empty.
                std::optional<std::int64_t> from = fromNs;
                if (from && !start.levels.empty()) {
                    std::int64_t lastStart = INT64_MIN;
                    for (const ChunkLevel &level : start.levels)
                        lastStart = std::max(lastStart, level.firstNs);
                    from = std::min(*from, lastStart);
                }
                reader.emplace(path, wanted, maxEvents, categories, from);
                return true;
            },
            [&](const Trace &trace, MemoryEvents &events, std::size_t first) {
                try {
                    reader->add(trace, events, first);
                } catch (const WindowRead &) {
                    window = reader->finish(fileEvents);
                    throw;
                }
            },
            progress, TraceReader::kNoTime);
        if (trace && reader && reader->started())
            window = reader->finish(fileEvents);
    } catch (const WindowRead &) {
    }
    // Totals that name no peak are damaged (so many events, none allocating): read whole;
    // so is a window that is the whole file.
    if (!window || !peak || window->readEvents >= fileEvents || (!fromNs && !holdsPeak(*window, *peak)))
        return std::nullopt;
    return window;
}

FileSummary summarizeWhole(const std::string &path, const Progress &progress)
{
    FileSummary result;
    result.trace = loadTrace(path, progress);
    result.summary = summarize(*result.trace);
    return result;
}

} // namespace

FileSummary summarizeFile(const std::string &path, const Progress &progress, StoredFigures figures)
{
    if (parseRemotePath(path)) {
        return readWhereItLies(
            path, progress,
            [&](const std::string &copy, const Progress &reading) { return summarizeFile(copy, reading, figures); },
            [&](const FileSummary &summary, const std::string &copy, const std::string &) {
                remoteread::nameSource(summary.trace, copy, path);
            },
            Copy::WhatIsRead);
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || detectFormat(path) != TraceFormat::Native)
        return summarizeWhole(path, progress);
    try {
        LoadBudget::Scope budget(path, std::filesystem::file_size(path, ec));
        std::optional<std::vector<std::uint8_t>> categories;
        const auto run = [&](const std::optional<std::optional<SummaryScan::Peak>> &expected) {
            return withCategories(path, categories, progress, [&](const std::vector<std::uint8_t> *worked) {
                return streamOnce(path, expected, worked, figures, progress);
            });
        };
        Pass pass = run(std::nullopt);
        if (pass.trace && !pass.summary) // the totals pointed elsewhere (damaged): once more, told
            pass = run(pass.found);
        if (pass.summary)
            return FileSummary{pass.trace, std::move(*pass.summary), !pass.stored, pass.stored};
    } catch (const NotInTimeOrder &) {
    }
    return summarizeWhole(path, progress);
}

std::optional<PeakWindow> readPeakWindow(const std::string &path, std::size_t maxEvents, std::size_t wholeUpTo,
                                         const Progress &progress, std::optional<std::int64_t> fromNs)
{
    std::error_code ec;
    if (maxEvents == 0 || !std::filesystem::is_regular_file(path, ec) || detectFormat(path) != TraceFormat::Native)
        return std::nullopt;
    // Most files are small enough: known from the chunk rows, before any table is read.
    if (const auto events = TraceReader::eventCount(path); events && *events <= std::max(maxEvents, wholeUpTo))
        return std::nullopt;
    try {
        LoadBudget::Scope budget(path, std::filesystem::file_size(path, ec));
        std::optional<std::vector<std::uint8_t>> categories;
        return withCategories(path, categories, progress, [&](const std::vector<std::uint8_t> *worked) {
            return windowOnce(path, maxEvents, wholeUpTo, worked, progress, fromNs);
        });
    } catch (const NotInTimeOrder &) {
    } catch (const SmallEnough &) {
    }
    return std::nullopt;
}

std::string nativeCopyPath(const std::string &input)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = userCacheFolder();
    if (folder.empty())
        return {};
    const fs::path absolute = fs::absolute(input, ec);
    const auto size = fs::file_size(input, ec);
    const auto modified = fs::last_write_time(input, ec).time_since_epoch().count();
    if (ec)
        return {};
    const std::size_t key = std::hash<std::string>{}(absolute.string() + '\n' + std::to_string(size) + '\n'
                                                     + std::to_string(modified) + '\n' + std::to_string(schema::kFormatVersion));
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016zx", key);
    return (folder / "copies" / (absolute.filename().string() + "." + hex + ".peaklens")).string();
}

namespace {

// The native copy of a big non-native trace, written now; empty where the cache cannot
// be written (the trace is then used whole).
std::string writeNativeCopy(const std::string &input, const Trace &trace)
{
    std::string copy = nativeCopyPath(input);
    if (copy.empty())
        return {};
    try {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(copy).parent_path(), ec);
        OutputFile output(copy, OutputFile::Existing::Replace, {input});
        TraceWriter::writeTrace(trace, output);
        keepCacheWithinLimit(copy);
        return copy;
    } catch (const Error &) {
        return {};
    }
}

} // namespace

OpenedTrace openTraceWindow(const std::string &path, const Progress &progress, std::optional<std::int64_t> fromNs)
{
    if (parseRemotePath(path)) {
        // Another window of a document already open (from a time) reads the copy its first did.
        return readWhereItLies(
            path, progress,
            [&](const std::string &copy, const Progress &reading) { return openTraceWindow(copy, reading, fromNs); },
            [&](OpenedTrace &opened, const std::string &copy, const std::string &kept) {
                remoteread::nameSource(opened.trace, copy, path);
                if (opened.windowOf == copy) // read again from the copy where it lies now
                    opened.windowOf = kept;
            },
            fromNs ? Copy::Reuse : Copy::Fresh);
    }
    constexpr std::size_t kEvents = LoadBudget::kDocumentEvents;
    if (auto window = readPeakWindow(path, kEvents, kEvents, progress, fromNs))
        return {std::move(window->trace), path};
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || detectFormat(path) == TraceFormat::Native)
        return {loadTrace(path, progress), {}};
    // A huge trace of another format: read once, kept as a native copy, opened from it.
    const std::string known = nativeCopyPath(path);
    if (!known.empty() && std::filesystem::is_regular_file(known, ec)) {
        try {
            if (auto window = readPeakWindow(known, kEvents, kEvents, progress, fromNs)) {
                markCacheUsed(known);
                return {std::move(window->trace), known};
            }
        } catch (const Error &) { // a damaged copy: made again below
        }
    }
    TracePtr whole = loadTrace(path, progress.part(0, 0.7));
    if (whole->events.size() <= kEvents)
        return {std::move(whole), {}};
    const std::string copy = writeNativeCopy(path, *whole);
    if (copy.empty())
        return {std::move(whole), {}};
    whole.reset();
    if (auto window = readPeakWindow(copy, kEvents, kEvents, progress.part(0.7, 1.0), fromNs))
        return {std::move(window->trace), copy};
    return {loadTrace(path, progress), {}};
}

TracePtr openTrace(const std::string &path, const Progress &progress)
{
    return openTraceWindow(path, progress).trace;
}

AnalysedTracePtr openAnalysed(const std::string &path, const ChainSelection &chain, const Progress &progress)
{
    // Reading is most of the work; the analysis takes the last tenth.
    return analyseTrace(path, openTrace(path, progress.part(0, 0.9)), chain, progress.part(0.9, 1));
}

} // namespace peaklens
