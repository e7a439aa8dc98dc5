// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes the native *.peaklens file (schema.h). Streaming mode is for collectors that
// append while training runs: WAL, a commit at least every second, so a killed process
// leaves a readable file. writeTrace() saves a whole Trace through an OutputFile: complete or not at all.
// Not thread-safe: one writer per thread.

#include "core/trace/trace.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace peaklens {

class OutputFile;
class SqliteDatabase;
class SqliteStatement;

class TraceWriter
{
public:
    enum class Mode { Streaming, Bulk };

    // Creates `path`; it must not exist yet. Throws FileError.
    explicit TraceWriter(const std::string &path, Mode mode = Mode::Streaming);
    ~TraceWriter();
    TraceWriter(const TraceWriter &) = delete;
    TraceWriter &operator=(const TraceWriter &) = delete;

    void writeMeta(std::string_view key, std::string_view value);
    void writeLane(std::uint32_t id, const Lane &lane);
    // Writing a layer id again replaces it: a collector learns kinds after the ranges.
    void writeLayer(std::uint32_t id, const Layer &layer);
    void writeFrame(std::uint32_t id, const Frame &frame);
    void writeStack(std::uint32_t id, const StackNode &node);
    void writeKernelName(std::uint32_t id, std::string_view name);
    void writeStageName(std::uint32_t id, std::string_view name);
    void writeEvent(const MemoryEvent &event);
    void writeReserved(const ReservedEvent &event);
    void writeRange(const Range &range);
    void writeStep(const Step &step);
    void writeKernel(const Kernel &kernel);
    void writeMarker(const Marker &marker);
    // Writes what `growing` holds beyond what earlier calls wrote from it: the rows each
    // table gained (rows already written stay as they were) and the metadata that is new or
    // changed, except the writer.* keys, which are this writer's own. For a recorder that
    // builds a trace as it runs and streams it piece by piece.
    void writeNew(const Trace &growing);

    // In streaming mode, commits when a second or more has passed since the last commit.
    // Writes call it too; a collector also calls it from its idle loop.
    void commitIfDue();
    void commit();
    // Commits, leaves a self-contained file (no -wal beside it) and closes it.
    void finish();

    std::uint64_t committedEvents() const { return m_committedEvents; }

    // This machine's name, as a file's writer.process names it.
    static std::string hostName();

    // Replaces `path` if it exists; with an OutputFile, as it was set up to, after
    // `complete` (when given) has had the finished file at its temporary path.
    static void writeTrace(const Trace &trace, const std::string &path);
    static void writeTrace(const Trace &trace, OutputFile &output,
                           const std::function<void(const std::string &path)> &complete = {});

    // Stores the figures a summary of the finished file at `path` shows (schema.h's
    // figures table), replacing any it held: for the one who wrote the file, never for
    // someone else's. `events` must be the file's event count; a file whose streaming
    // writer has not finished it (still writing, or killed) is refused. Throws FileError.
    static void storeFigures(const std::string &path, std::int64_t analysis, std::uint64_t events, std::string_view figures);

private:
    struct Chunk;
    // What writeNew has written so far: rows per table, and the metadata.
    struct Written
    {
        std::size_t lanes = 0, layers = 0, frames = 0, stacks = 1, kernelNames = 0, stageNames = 0;
        std::size_t events = 0, reserved = 0, ranges = 0, steps = 0, kernels = 0, markers = 0;
        std::map<std::string, std::string, std::less<>> meta;
    };

    void flushChunk();
    void leaveWriteAheadLog();
    void fail(const std::exception &error) const;

    std::string m_path;
    Mode m_mode;
    std::unique_ptr<SqliteDatabase> m_db;
    std::unique_ptr<SqliteStatement> m_insertEvents;
    std::unique_ptr<SqliteStatement> m_insertReserved;
    std::unique_ptr<SqliteStatement> m_insertRange;
    std::unique_ptr<SqliteStatement> m_insertKernel;
    std::unique_ptr<Chunk> m_chunk;
    std::int64_t m_nextChunk = 0;
    std::uint64_t m_writtenEvents = 0;
    std::uint64_t m_committedEvents = 0;
    std::uint32_t m_writesSinceClockCheck = 0;
    std::chrono::steady_clock::time_point m_lastCommit;
    bool m_finished = false;
    Written m_written;
};

// A new, empty native file at `path` with every table of this format, in WAL mode for a
// writer that commits as it goes (Streaming), else unjournaled; what TraceWriter and
// MirrorSink write into. Throws FileError naming `path` when it exists or cannot be made.
std::unique_ptr<SqliteDatabase> createTraceDatabase(const std::string &path, TraceWriter::Mode mode);

} // namespace peaklens
