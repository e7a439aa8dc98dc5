// SPDX-License-Identifier: Apache-2.0
#include "core/record/processrecording.h"

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/record/manifest.h"
#include "core/trace/metadata.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace peaklens::record {

namespace {

constexpr auto kFlushInterval = std::chrono::milliseconds(500);

std::string environment(const char *name)
{
    const char *value = std::getenv(name);
    return value ? value : "";
}

// What the launcher says of this process: torchrun's variables, else Slurm's (srun
// without torchrun), else nothing.
std::string launcherValue(const char *torchrun, const char *slurm)
{
    const std::string value = environment(torchrun);
    return value.empty() ? environment(slurm) : value;
}

std::string globalRank()
{
    return launcherValue("RANK", "SLURM_PROCID");
}

std::string localRank()
{
    return launcherValue("LOCAL_RANK", "SLURM_LOCALID");
}

void writeProcessMeta(TraceWriter &writer, const std::string &description)
{
    writer.writeMeta(metakey::Description, description);
    const std::string allocator = environment("PEAKLENS_ALLOCATOR");
    writer.writeMeta(metakey::AllocatorMode, allocator.empty() ? "native" : allocator);
    writer.writeMeta(metakey::Command, environment("PEAKLENS_COMMAND"));
    const std::string cwd = environment("PEAKLENS_CWD");
    writer.writeMeta(metakey::WorkingDirectory, cwd.empty() ? std::filesystem::current_path().string() : cwd);
    writer.writeMeta(metakey::Checkpoint, environment("PEAKLENS_CHECKPOINT"));
    writer.writeMeta(metakey::ProcessId, std::to_string(::getpid()));
    const std::pair<std::string, std::string_view> launcher[] = {
        {globalRank(), metakey::Rank},
        {localRank(), metakey::LocalRank},
        {launcherValue("WORLD_SIZE", "SLURM_NTASKS"), metakey::WorldSize}};
    for (const auto &[value, key] : launcher) {
        if (!value.empty())
            writer.writeMeta(key, value);
    }
}

// When a queued record happened, for the records whose place among the ranges matters.
std::optional<std::int64_t> recordTime(const ActivityRecord &record)
{
    if (const auto *memory = std::get_if<MemoryRecord>(&record))
        return memory->timeNs;
    if (const auto *pool = std::get_if<PoolRecord>(&record))
        return pool->timeNs;
    return std::nullopt;
}

// Moves the items `ready` accepts from `queued` to `batch`; both keep their order.
template<typename Item, typename Ready>
void takeReady(std::vector<Item> &queued, std::vector<Item> &batch, Ready ready)
{
    const auto later = std::stable_partition(queued.begin(), queued.end(), ready);
    batch.assign(std::make_move_iterator(queued.begin()), std::make_move_iterator(later));
    queued.erase(queued.begin(), later);
}

} // namespace

std::string processTag()
{
    std::string tag;
    if (!globalRank().empty())
        tag = "rank" + globalRank() + "-";
    else if (!localRank().empty())
        tag = "local" + localRank() + "-";
    return tag + "pid" + std::to_string(::getpid());
}

void say(const std::string &line)
{
    std::fprintf(stderr, "peaklens: %s\n", line.c_str());
}

std::uint32_t ProcessRecording::currentThread()
{
    return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

ProcessRecording::ProcessRecording(Backend backend)
    : m_backend(std::move(backend))
{
    const std::filesystem::path out = environment("PEAKLENS_OUT").empty() ? std::filesystem::current_path()
                                                                          : std::filesystem::path(environment("PEAKLENS_OUT"));
    const std::string tag = processTag();
    m_path = (out / (tag + ".peaklens")).string();
    m_manifestPath = (out / (tag + ".manifest.json")).string();
    m_writer = std::make_unique<TraceWriter>(m_path);
    writeProcessMeta(*m_writer, m_backend.description);
    m_backend.options.originNs = m_backend.now();
    m_session = std::make_unique<RecordingSession>(*m_writer, m_backend.options, m_backend.source);
    m_flusher = std::thread([this] { flushLoop(); });
}

ProcessRecording::~ProcessRecording()
{
    finish();
}

void ProcessRecording::pushRange(std::string_view name)
{
    pushRange(currentThread(), m_backend.now(), name);
}

void ProcessRecording::popRange()
{
    popRange(currentThread(), m_backend.now());
}

void ProcessRecording::pushRange(std::uint32_t thread, std::int64_t timeNs, std::string_view name)
{
    std::lock_guard lock(m_queueMutex);
    m_ranges.push_back({thread, timeNs, std::string(name)});
}

void ProcessRecording::popRange(std::uint32_t thread, std::int64_t timeNs)
{
    std::lock_guard lock(m_queueMutex);
    m_ranges.push_back({thread, timeNs, std::nullopt});
}

void ProcessRecording::add(ActivityRecord record)
{
    std::lock_guard lock(m_queueMutex);
    m_records.push_back(std::move(record));
}

void ProcessRecording::abandon(const std::exception &error)
{
    say("recording stopped, " + std::string(error.what()));
    m_session.reset();
    m_writer.reset();
}

// Writes the ranges and records queued from before `untilNs` (for CUPTI: the moment of
// the flush that delivered every record up to it), so a commit holds no range whose
// allocations are still in the backend's buffers, nor the reverse; later ones wait for the
// next batch. Ranges go first: every range around a delivered allocation was pushed before
// it was made.
void ProcessRecording::writeBatch(std::int64_t untilNs)
{
    std::vector<RangeCall> ranges;
    std::vector<ActivityRecord> records;
    {
        std::lock_guard lock(m_queueMutex);
        takeReady(m_ranges, ranges, [&](const RangeCall &call) { return call.timeNs < untilNs; });
        takeReady(m_records, records, [&](const ActivityRecord &record) { return recordTime(record).value_or(0) < untilNs; });
    }
    std::lock_guard lock(m_mutex);
    if (!m_session)
        return;
    try {
        for (const RangeCall &call : ranges) {
            if (call.pushed)
                m_session->pushRange(call.thread, call.timeNs, *call.pushed);
            else
                m_session->popRange(call.thread, call.timeNs);
        }
        for (ActivityRecord &record : records)
            m_session->add(std::move(record));
        m_session->endBatch();
    } catch (const std::exception &error) {
        abandon(error);
    }
}

void ProcessRecording::flushNow()
{
    const std::int64_t until = m_backend.now();
    if (m_backend.flush)
        m_backend.flush();
    writeBatch(until);
}

void ProcessRecording::flushLoop()
{
    std::unique_lock lock(m_flushMutex);
    while (!m_stopping) {
        m_flushWake.wait_for(lock, kFlushInterval, [this] { return m_stopping; });
        if (m_stopping)
            break;
        lock.unlock();
        flushNow();
        lock.lock();
    }
}

void ProcessRecording::applyManifest()
{
    std::ifstream in(m_manifestPath);
    if (!in)
        return; // the script did not use the helper: no layer kinds
    std::ostringstream text;
    text << in.rdbuf();
    try {
        m_session->applyManifest(parseManifest(text.str()));
    } catch (const Error &error) {
        say(m_manifestPath + ": " + error.what());
    }
}

void ProcessRecording::finish()
{
    {
        std::lock_guard lock(m_flushMutex);
        if (m_stopping)
            return;
        m_stopping = true;
    }
    m_flushWake.notify_all();
    if (m_flusher.joinable())
        m_flusher.join();
    if (m_backend.flush)
        m_backend.flush();
    writeBatch(std::numeric_limits<std::int64_t>::max());
    std::lock_guard lock(m_mutex);
    if (!m_session)
        return;
    try {
        applyManifest();
        m_session->finish();
        const std::uint64_t events = m_session->writtenEvents();
        m_session.reset();
        m_writer->finish();
        m_writer.reset();
        say("wrote " + m_path + " (" + std::to_string(events) + " memory events)");
    } catch (const std::exception &error) {
        abandon(error);
    }
}

} // namespace peaklens::record
