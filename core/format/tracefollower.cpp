// SPDX-License-Identifier: Apache-2.0
#include "tracefollower.h"

#include "core/trace/lifetimecategories.h"
#include "core/trace/metadata.h"
#include "nativefilereader.h"
#include "sqlitedatabase.h"
#include "tracewriter.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace peaklens {

namespace {

// Sorts `added` by `key` and merges it into `items`, sorted the same way; returns the
// index from which `items` changed. Rows come mostly in order: the merge touches only
// what lies after the earliest new one.
template<typename T, typename Key>
std::size_t mergeSorted(std::vector<T> &items, std::vector<T> &added, Key key)
{
    const auto before = [&](const T &a, const T &b) { return key(a) < key(b); };
    if (!std::is_sorted(added.begin(), added.end(), before))
        std::stable_sort(added.begin(), added.end(), before);
    const std::size_t old = items.size();
    if (added.empty())
        return old;
    const auto from = std::upper_bound(items.begin(), items.end(), added.front(), before) - items.begin();
    items.insert(items.end(), added.begin(), added.end());
    std::inplace_merge(items.begin() + from, items.begin() + static_cast<std::ptrdiff_t>(old), items.end(), before);
    return static_cast<std::size_t>(from);
}

// Whether the process runs on this machine; one that has ended but not yet been waited
// for by its parent (a zombie) does not.
bool processRuns(long pid)
{
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return true; // no /proc: kill's answer stands
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

} // namespace

bool TraceFollower::Update::changedAnything() const
{
    return newEvents > 0 || newRows > 0 || tablesChanged || reordered || recategorized;
}

TraceGrowth TraceFollower::growth(const Update &update) const
{
    return TraceGrowth{update.eventsFrom, update.reservedFrom, update.rangesFrom,
                       update.stepsFrom,  update.kernelsFrom,  update.reordered || update.recategorized,
                       !isLive()};
}

TraceFollower::TraceFollower(std::string path)
    : m_path(std::move(path))
    , m_reader(std::make_unique<NativeFileReader>(m_path, std::span<const char>(), m_progress))
    , m_trace(std::make_unique<Trace>())
{
}

TraceFollower::~TraceFollower() = default;

TraceFollower::Update TraceFollower::poll()
{
    Update update;
    const Trace &trace = *m_trace;
    update.eventsFrom = trace.events.size();
    update.reservedFrom = trace.reserved.size();
    update.rangesFrom = trace.ranges.size();
    update.stepsFrom = trace.steps.size();
    update.kernelsFrom = trace.kernels.size();
    update.markersFrom = trace.markers.size();
    if (!isLive())
        return update;
    // Once the writer is seen gone, one more read takes what it committed last.
    for (int read = 0; read < 2; ++read) {
        checkSameFile();
        if (!m_reader->readCommitted())
            return update;
        merge(m_reader->builder().takeAdded(), update);
        checkSameFile();
        const Writer was = m_writer;
        m_writer = findWriter();
        if (m_writer == Writer::Writing || was != Writer::Writing)
            break;
    }
    // Once nothing more will come, lifetimes are known as a plain read knows them.
    if (!isLive() && m_trace->metaValue(metakey::Categories) == "lifetime") {
        classifyByLifetime(*m_trace);
        update.recategorized = true;
    }
    return update;
}

void TraceFollower::merge(Trace added, Update &update)
{
    Trace &trace = *m_trace;
    const Trace &tables = m_reader->builder().current();
    if (trace.meta != tables.meta || trace.lanes != tables.lanes || trace.layers != tables.layers
        || trace.kernelNames.size() != tables.kernelNames.size() || trace.stageNames.size() != tables.stageNames.size()
        || trace.stacks.nodes().size() != tables.stacks.nodes().size()
        || trace.stacks.frames().size() != tables.stacks.frames().size()) {
        trace.meta = tables.meta;
        trace.lanes = tables.lanes;
        trace.layers = tables.layers;
        trace.kernelNames = tables.kernelNames;
        trace.stageNames = tables.stageNames;
        trace.stacks = tables.stacks;
        update.tablesChanged = true;
    }

    MemoryEvents &events = added.events;
    update.newEvents += events.size();
    events.sortByTime();
    // Times that span more than a model can measure are damage, as in a whole read.
    std::int64_t &first = m_firstNs, &last = m_lastNs;
    const auto see = [&](std::int64_t from, std::int64_t to) {
        first = std::min(first, from);
        last = std::max(last, to);
    };
    if (!events.empty())
        see(events.timeNs(0), events.timeNs(events.size() - 1));
    for (const Range &range : added.ranges)
        see(range.beginNs, range.endNs);
    for (const Step &step : added.steps)
        see(step.beginNs, step.endNs);
    if (first<last &&static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(first)> std::uint64_t(
            TraceBuilder::kMaxSpanNs))
        throw ImportError(m_path, "is damaged: its times run from " + std::to_string(first) + " to " + std::to_string(last)
                                      + " ns, more than 104 days apart.");

    if (!events.empty()) {
        const bool inOrder = trace.events.empty() || events.timeNs(0) >= trace.events.timeNs(trace.events.size() - 1);
        trace.events.append(events, 0, events.size());
        if (!inOrder) {
            trace.events.sortByTime();
            update.reordered = true;
            update.eventsFrom = 0;
        }
    }
    update.newRows +=
        added.reserved.size() + added.ranges.size() + added.steps.size() + added.kernels.size() + added.markers.size();
    const auto keep = [](std::size_t &from, std::size_t changed) { from = std::min(from, changed); };
    keep(update.reservedFrom, mergeSorted(trace.reserved, added.reserved, [](const ReservedEvent &e) { return e.timeNs; }));
    keep(update.rangesFrom, mergeSorted(trace.ranges, added.ranges, [](const Range &r) { return r.beginNs; }));
    keep(update.stepsFrom, mergeSorted(trace.steps, added.steps, [](const Step &s) { return s.beginNs; }));
    keep(update.kernelsFrom, mergeSorted(trace.kernels, added.kernels, [](const Kernel &k) { return k.beginNs; }));
    keep(update.markersFrom, mergeSorted(trace.markers, added.markers, [](const Marker &m) { return m.timeNs; }));
}

void TraceFollower::checkSameFile()
{
    struct stat status
    { };
    if (::stat(m_path.c_str(), &status) != 0) {
        if (m_identity)
            throw ImportError(m_path, "was deleted or moved while it was followed; what was read before stays as it was.");
        return; // not there yet: the reader says so
    }
    Identity now{static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino),
                 static_cast<std::uint64_t>(status.st_size), m_trace->metaValue(metakey::WriterProcess),
                 m_trace->metaValue(metakey::WriterSource)};
    if (m_identity && (now.device != m_identity->device || now.inode != m_identity->inode) && finishedCopyOf(*m_identity)) {
        // The copy of a file written elsewhere, replaced by that file once finished: the
        // same rows under the same ids, and its writer is the original's.
        now.writer = now.source = m_identity->source;
    } else if (m_identity) {
        const Identity &was = *m_identity;
        if (now.device != was.device || now.inode != was.inode)
            throw ImportError(m_path, "was replaced by another file while it was followed; what was read before stays as "
                                      "it was. Open the new file on its own.");
        if (now.bytes < was.bytes)
            throw ImportError(m_path, "shrank from " + std::to_string(was.bytes) + " to " + std::to_string(now.bytes)
                                          + " bytes while it was followed: it was truncated or rewritten; what was read "
                                            "before stays as it was.");
        if (!was.writer.empty() && now.writer != was.writer)
            throw ImportError(m_path, "was replaced while it was followed: \"" + was.writer + "\" wrote it, now \"" + now.writer
                                          + "\" does; what was read before stays as it was.");
        if (now.writer.empty())
            now.writer = was.writer;
    }
    m_identity = now;
}

bool TraceFollower::finishedCopyOf(const Identity &copy) const
{
    if (copy.source.empty())
        return false;
    try {
        const auto db = SqliteDatabase::openImmutable(m_path);
        db->restrictToReading();
        auto meta = db->prepare("SELECT key, value FROM meta WHERE key IN (?, ?)");
        meta.bind(1, metakey::WriterState).bind(2, metakey::WriterProcess);
        std::string state, writer;
        while (meta.step())
            (meta.text(0) == metakey::WriterState ? state : writer) = meta.text(1);
        return state == "finished" && writer == copy.source;
    } catch (const Error &) {
        return false;
    }
}

TraceFollower::Writer TraceFollower::findWriter() const
{
    const std::string state = m_trace->metaValue(metakey::WriterState);
    if (state == "finished")
        return Writer::Finished;
    std::error_code ec;
    const bool logBeside = std::filesystem::exists(m_path + "-wal", ec);
    // Files from writers that do not say: open while their log is.
    if (state != "writing")
        return logBeside ? Writer::Writing : Writer::Finished;
    if (!logBeside)
        return Writer::Stopped;
    const auto pid = localWriterPid();
    return pid && !processRuns(*pid) ? Writer::Stopped : Writer::Writing;
}

std::optional<long> TraceFollower::localWriterPid() const
{
    std::istringstream process(m_trace->metaValue(metakey::WriterProcess));
    std::string host;
    long pid = 0;
    if (process >> host >> pid && host == TraceWriter::hostName() && pid > 0)
        return pid;
    return std::nullopt;
}

std::string TraceFollower::writerText() const
{
    // A copy names the original's writer: the run a user knows of.
    const std::string source = m_trace->metaValue(metakey::WriterSource);
    std::istringstream process(source.empty() ? m_trace->metaValue(metakey::WriterProcess) : source);
    std::string host, pid;
    process >> host >> pid;
    const std::string who = pid.empty() ? std::string("its writer") : "its writer (pid " + pid + " on " + host + ")";
    switch (m_writer) {
    case Writer::Waiting:
        return "waiting for " + who + " to commit its first rows";
    case Writer::Writing:
        return who + " is writing it";
    case Writer::Finished:
        return who + " finished it";
    case Writer::Stopped:
        return who + " stopped without finishing it; everything it committed is shown";
    }
    return {};
}

} // namespace peaklens
