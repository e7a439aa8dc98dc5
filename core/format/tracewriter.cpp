// SPDX-License-Identifier: Apache-2.0
#include "tracewriter.h"

#include "outputfile.h"

#include "core/error.h"
#include "eventchunk.h"
#include "schema.h"
#include "sqlitedatabase.h"

#include "core/trace/metadata.h"

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>

#include <unistd.h>

namespace peaklens {

struct TraceWriter::Chunk
{
    eventchunk::Columns columns;
    std::int64_t bytesAllocated = 0;
    std::int64_t bytesFreed = 0;
    eventchunk::RunningTotals totals;

    void clear()
    {
        columns.clear();
        bytesAllocated = bytesFreed = 0;
    }
};

namespace {

[[noreturn]] void failWriting(const std::string &path, const SqliteDatabase *db, const std::exception &error)
{
    // A full disk or the file-size limit, said as PeakLens says it for every file it writes:
    // SQLite keeps the failed call's errno, or reports the error before another call.
    const int lastCall = errno;
    for (const int system : {db ? sqlite3_system_errno(db->handle()) : 0, lastCall}) {
        if (system == EFBIG || system == ENOSPC || system == EDQUOT)
            throw FileError(path, "could not be written: " + writeProblemText(system) + ".");
    }
    throw FileError(path, std::string("could not be written: ") + error.what());
}

} // namespace

std::unique_ptr<SqliteDatabase> createTraceDatabase(const std::string &path, TraceWriter::Mode mode)
{
    ignoreFileSizeSignal();
    std::error_code ec;
    if (std::filesystem::exists(path, ec))
        throw FileError(path, "already exists; PeakLens never overwrites a trace in place.");
    // Logs left beside a file that is gone belong to no database; SQLite would apply
    // them to the new one.
    for (const char *suffix : {"-wal", "-shm", "-journal"})
        std::filesystem::remove(path + suffix, ec);
    std::unique_ptr<SqliteDatabase> db;
    try {
        db = std::make_unique<SqliteDatabase>(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db->exec("PRAGMA page_size = 8192");
        if (mode == TraceWriter::Mode::Streaming)
            db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
        else
            db->exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
        db->exec("PRAGMA application_id = " + std::to_string(schema::kApplicationId)
                 + "; PRAGMA user_version = " + std::to_string(schema::kFormatVersion));
        db->exec("BEGIN");
        db->exec(schema::kCreateTables);
        db->exec(schema::kCreateEvents);
        db->exec(schema::kCreateFigures);
        db->exec("COMMIT");
        return db;
    } catch (const Error &error) {
        failWriting(path, db.get(), error);
    }
}

TraceWriter::TraceWriter(const std::string &path, Mode mode)
    : m_path(path)
    , m_mode(mode)
    , m_chunk(std::make_unique<Chunk>())
{
    try {
        m_db = createTraceDatabase(path, mode);
        m_db->exec("BEGIN");
        m_insertEvents =
            std::make_unique<SqliteStatement>(m_db->handle(), "INSERT INTO events VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        m_insertReserved = std::make_unique<SqliteStatement>(m_db->handle(), "INSERT INTO reserved VALUES(?, ?, ?, ?)");
        m_insertRange = std::make_unique<SqliteStatement>(m_db->handle(), "INSERT INTO ranges VALUES(?, ?, ?, ?, ?, ?, ?)");
        m_insertKernel = std::make_unique<SqliteStatement>(m_db->handle(), "INSERT INTO kernels VALUES(?, ?, ?, ?)");
        m_db->exec("COMMIT; BEGIN");
    } catch (const FileError &) {
        throw;
    } catch (const Error &error) {
        fail(error);
    }
    if (mode == Mode::Streaming) {
        // A reader following the file holds it for a few milliseconds at a time.
        sqlite3_busy_timeout(m_db->handle(), 10000);
        writeMeta(metakey::WriterState, "writing");
        writeMeta(metakey::WriterProcess, hostName() + " " + std::to_string(::getpid()));
        commit();
    }
    m_lastCommit = std::chrono::steady_clock::now();
}

std::string TraceWriter::hostName()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || !name[0])
        return "localhost";
    return name;
}

TraceWriter::~TraceWriter()
{
    if (m_finished || !m_db)
        return;
    // Whoever is unwinding reports the first failure; a second one here would only repeat
    // it (a full disk), and a streamed file stays readable from its log regardless.
    try {
        finish();
    } catch (const Error &) {
    }
}

void TraceWriter::fail(const std::exception &error) const
{
    failWriting(m_path, m_db.get(), error);
}

void TraceWriter::writeMeta(std::string_view key, std::string_view value)
{
    try {
        m_db->prepare("INSERT OR REPLACE INTO meta VALUES(?, ?)").bind(1, key).bind(2, value).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeLane(std::uint32_t id, const Lane &lane)
{
    m_chunk->totals.setLaneDevice(id, lane.device);
    try {
        m_db->prepare("INSERT INTO lanes VALUES(?, ?, ?, ?, ?, ?)")
            .bind(1, id)
            .bind(2, static_cast<std::int64_t>(lane.device.type))
            .bind(3, lane.device.index)
            .bind(4, static_cast<std::int64_t>(lane.stream))
            .bind(5, lane.pool.graph)
            .bind(6, lane.pool.user)
            .run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeLayer(std::uint32_t id, const Layer &layer)
{
    try {
        auto statement = m_db->prepare("INSERT OR REPLACE INTO layers VALUES(?, ?, ?, ?, ?)");
        statement.bind(1, id);
        if (layer.parent == kNoLayer)
            statement.bindNull(2);
        else
            statement.bind(2, layer.parent);
        statement.bind(3, layer.path).bind(4, layer.kind).bind(5, layer.parameterBytes).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeFrame(std::uint32_t id, const Frame &frame)
{
    try {
        m_db->prepare("INSERT INTO frames VALUES(?, ?, ?, ?)")
            .bind(1, id)
            .bind(2, frame.function)
            .bind(3, frame.file)
            .bind(4, frame.line)
            .run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeStack(std::uint32_t id, const StackNode &node)
{
    try {
        m_db->prepare("INSERT INTO stacks VALUES(?, ?, ?)").bind(1, id).bind(2, node.parent).bind(3, node.frame).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeKernelName(std::uint32_t id, std::string_view name)
{
    try {
        m_db->prepare("INSERT INTO kernel_names VALUES(?, ?)").bind(1, id).bind(2, name).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeStageName(std::uint32_t id, std::string_view name)
{
    try {
        m_db->prepare("INSERT INTO stage_names VALUES(?, ?)").bind(1, id).bind(2, name).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeEvent(const MemoryEvent &event)
{
    Chunk &chunk = *m_chunk;
    chunk.columns.append(event);
    if (event.deltaBytes > 0)
        chunk.bytesAllocated += event.deltaBytes;
    else
        chunk.bytesFreed -= event.deltaBytes;
    ++m_writtenEvents;
    if (chunk.columns.size() >= schema::kEventsPerChunk)
        flushChunk();
    if (++m_writesSinceClockCheck >= 1024)
        commitIfDue();
}

void TraceWriter::flushChunk()
{
    Chunk &chunk = *m_chunk;
    const eventchunk::Columns &columns = chunk.columns;
    if (columns.empty())
        return;
    const auto [lowest, highest] = std::minmax_element(columns.timeNs.begin(), columns.timeNs.end());
    const eventchunk::Stored stored = eventchunk::encode(columns);
    const std::string totals = chunk.totals.add(columns);
    try {
        m_insertEvents->bind(1, m_nextChunk)
            .bind(2, static_cast<std::int64_t>(columns.size()))
            .bind(3, columns.timeNs.front())
            .bind(4, columns.timeNs.back())
            .bind(5, *lowest)
            .bind(6, *highest)
            .bind(7, chunk.bytesAllocated)
            .bind(8, chunk.bytesFreed)
            .bind(9, std::as_bytes(std::span(totals)))
            .bind(10, static_cast<std::int64_t>(stored.codec))
            .bind(11, static_cast<std::int64_t>(stored.plainBytes))
            .bind(12, std::as_bytes(std::span(stored.bytes)))
            .run();
    } catch (const Error &error) {
        fail(error);
    }
    ++m_nextChunk;
    chunk.clear();
}

void TraceWriter::writeReserved(const ReservedEvent &event)
{
    try {
        m_insertReserved->bind(1, event.timeNs)
            .bind(2, event.deltaBytes)
            .bind(3, static_cast<std::int64_t>(event.addr))
            .bind(4, event.lane)
            .run();
    } catch (const Error &error) {
        fail(error);
    }
    if (++m_writesSinceClockCheck >= 1024)
        commitIfDue();
}

void TraceWriter::writeRange(const Range &range)
{
    try {
        if (range.layer == kNoLayer)
            m_insertRange->bindNull(1);
        else
            m_insertRange->bind(1, range.layer);
        m_insertRange->bind(2, static_cast<std::int64_t>(range.phase));
        if (range.step == kNoStep)
            m_insertRange->bindNull(3);
        else
            m_insertRange->bind(3, range.step);
        if (range.stage == kNoStage)
            m_insertRange->bindNull(7);
        else
            m_insertRange->bind(7, range.stage);
        m_insertRange->bind(4, range.beginNs).bind(5, range.endNs).bind(6, range.thread).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeStep(const Step &step)
{
    try {
        m_db->prepare("INSERT INTO steps VALUES(?, ?, ?)").bind(1, step.number).bind(2, step.beginNs).bind(3, step.endNs).run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::writeKernel(const Kernel &kernel)
{
    try {
        m_insertKernel->bind(1, kernel.name).bind(2, kernel.lane).bind(3, kernel.beginNs).bind(4, kernel.endNs).run();
    } catch (const Error &error) {
        fail(error);
    }
    if (++m_writesSinceClockCheck >= 1024)
        commitIfDue();
}

void TraceWriter::writeMarker(const Marker &marker)
{
    try {
        m_db->prepare("INSERT INTO markers VALUES(?, ?, ?, ?)")
            .bind(1, marker.timeNs)
            .bind(2, marker.lane)
            .bind(3, markerKindName(marker.kind))
            .bind(4, marker.bytes)
            .run();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::commitIfDue()
{
    m_writesSinceClockCheck = 0;
    if (m_mode != Mode::Streaming)
        return;
    if (std::chrono::steady_clock::now() - m_lastCommit >= std::chrono::seconds(1))
        commit();
}

void TraceWriter::commit()
{
    flushChunk();
    try {
        m_db->exec("COMMIT; BEGIN");
    } catch (const Error &error) {
        fail(error);
    }
    m_committedEvents = m_writtenEvents;
    m_lastCommit = std::chrono::steady_clock::now();
}

void TraceWriter::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    flushChunk();
    if (m_mode == Mode::Streaming)
        writeMeta(metakey::WriterState, "finished");
    try {
        m_db->exec("COMMIT");
        m_committedEvents = m_writtenEvents;
        m_insertEvents.reset();
        m_insertReserved.reset();
        m_insertRange.reset();
        m_insertKernel.reset();
        if (m_mode == Mode::Streaming)
            leaveWriteAheadLog();
        m_db->close();
    } catch (const Error &error) {
        fail(error);
    }
}

void TraceWriter::leaveWriteAheadLog()
{
    // Needs the file to itself: a reader following it holds it a few milliseconds at a
    // time. Should one hold on, the file stays in WAL mode, complete all the same.
    for (int attempt = 0;; ++attempt) {
        try {
            m_db->exec("PRAGMA journal_mode = DELETE");
            return;
        } catch (const Error &) {
            if (attempt == 100)
                return;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
}

void TraceWriter::storeFigures(const std::string &path, std::int64_t analysis, std::uint64_t events, std::string_view figures)
{
    try {
        SqliteDatabase db(path, SQLITE_OPEN_READWRITE);
        sqlite3_busy_timeout(db.handle(), 2000);
        if (db.queryInteger("PRAGMA application_id") != schema::kApplicationId
            || db.queryInteger("PRAGMA user_version") != schema::kFormatVersion || !db.hasTable("figures"))
            throw Error("it is not a trace file of format " + std::to_string(schema::kFormatVersion));
        db.exec("BEGIN IMMEDIATE");
        auto state = db.prepare("SELECT value FROM meta WHERE key = ?");
        state.bind(1, metakey::WriterState);
        if (state.step() && state.text(0) != "finished")
            throw Error("its writer has not finished it");
        if (db.queryInteger("SELECT ifnull(sum(count), 0) FROM events") != static_cast<std::int64_t>(events))
            throw Error("its events are not those the figures are for");
        db.exec("DELETE FROM figures");
        auto insert = db.prepare("INSERT INTO figures VALUES(?, ?, ?)");
        insert.bind(1, analysis).bind(2, static_cast<std::int64_t>(events));
        insert.bind(3, std::as_bytes(std::span(figures.data(), figures.size()))).run();
        db.exec("COMMIT");
    } catch (const Error &error) {
        throw FileError(path, std::string("cannot take its summary figures: ") + error.what());
    }
}

void TraceWriter::writeTrace(const Trace &trace, const std::string &path)
{
    OutputFile output(path, OutputFile::Existing::Replace);
    writeTrace(trace, output);
}

void TraceWriter::writeNew(const Trace &growing)
{
    for (const auto &[key, value] : growing.meta) {
        if (key == metakey::WriterState || key == metakey::WriterProcess)
            continue;
        const auto written = m_written.meta.find(key);
        if (written != m_written.meta.end() && written->second == value)
            continue;
        writeMeta(key, value);
        m_written.meta.insert_or_assign(key, value);
    }
    // Each table from the first row not yet written; ids are row indexes.
    const auto writeFrom = [](std::size_t &written, std::size_t size, auto &&write) {
        for (; written < size; ++written)
            write(written);
    };
    const StackTable &stacks = growing.stacks;
    writeFrom(m_written.lanes, growing.lanes.size(), [&](std::size_t i) { writeLane(std::uint32_t(i), growing.lanes[i]); });
    writeFrom(m_written.layers, growing.layers.size(), [&](std::size_t i) { writeLayer(std::uint32_t(i), growing.layers[i]); });
    writeFrom(m_written.frames, stacks.frames().size(), [&](std::size_t i) { writeFrame(std::uint32_t(i), stacks.frames()[i]); });
    writeFrom(m_written.stacks, stacks.nodes().size(), [&](std::size_t i) { writeStack(std::uint32_t(i), stacks.nodes()[i]); });
    writeFrom(m_written.kernelNames, growing.kernelNames.size(),
              [&](std::size_t i) { writeKernelName(std::uint32_t(i), growing.kernelNames[i]); });
    writeFrom(m_written.stageNames, growing.stageNames.size(),
              [&](std::size_t i) { writeStageName(std::uint32_t(i), growing.stageNames[i]); });
    writeFrom(m_written.events, growing.events.size(), [&](std::size_t i) { writeEvent(growing.events.at(i)); });
    writeFrom(m_written.reserved, growing.reserved.size(), [&](std::size_t i) { writeReserved(growing.reserved[i]); });
    writeFrom(m_written.ranges, growing.ranges.size(), [&](std::size_t i) { writeRange(growing.ranges[i]); });
    writeFrom(m_written.steps, growing.steps.size(), [&](std::size_t i) { writeStep(growing.steps[i]); });
    writeFrom(m_written.kernels, growing.kernels.size(), [&](std::size_t i) { writeKernel(growing.kernels[i]); });
    writeFrom(m_written.markers, growing.markers.size(), [&](std::size_t i) { writeMarker(growing.markers[i]); });
}

void TraceWriter::writeTrace(const Trace &trace, OutputFile &output, const std::function<void(const std::string &)> &complete)
{
    try {
        {
            TraceWriter writer(output.temporary(), Mode::Bulk);
            writer.writeNew(trace);
            writer.finish();
        }
        if (complete)
            complete(output.temporary());
    } catch (const FileError &error) {
        // The writer names its temporary; the user knows the target.
        throw FileError(output.path(), error.problem());
    }
    output.commit();
}

} // namespace peaklens
