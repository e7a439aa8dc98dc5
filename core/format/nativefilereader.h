// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reader behind TraceReader and TraceFollower: opens a native file as data, checks its
// header, version and schema, and reads its tables through a TraceBuilder, every problem
// an ImportError naming the file. A follower keeps one alive and reads, each time, only
// the rows committed since the last read. Internal to core/format.

#include "byteorder.h"
#include "core/progress.h"
#include "core/trace/tracebuilder.h"
#include "privatecopy.h"
#include "sqlitedatabase.h"
#include "tracereader.h"

#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace peaklens {

inline constexpr std::size_t kHeaderSize = 100;
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

inline bool hasSqliteMagic(std::span<const std::byte> header)
{
    return header.size() >= kSqliteMagic.size() && std::memcmp(header.data(), kSqliteMagic.data(), kSqliteMagic.size()) == 0;
}

// Reads one file; every problem becomes an ImportError naming it.
class NativeFileReader
{
public:
    // `image`: the whole file, already read (from a pipe); else the file at `path` is opened.
    NativeFileReader(std::string path, std::span<const char> image, const Progress &progress);

    std::shared_ptr<const Trace> read();

    // Everything but the memory events.
    void readTables();
    // The same, as a trace.
    std::shared_ptr<const Trace> tables();
    // Which rows of the timed tables the read takes (every row unless set).
    void setTimeSpan(TimeSpan span) { m_timed = span; }

    // The events the chunk rows claim, without reading the events or any other table;
    // null when the file can only be opened through a private copy (a log beside it).
    std::optional<std::uint64_t> eventCount();
    // The same with the running totals, chunk by chunk (format 2 and later; none for format
    // 1): what StreamStart says before any table is read.
    std::optional<TraceReader::StreamStart> chunkRows();

    // For a follower: reads the rows committed since the last call (everything, the first
    // time) into the builder, in one read transaction on a connection opened for this read
    // alone, so the writer is never kept from committing or finishing. False, having read
    // nothing, while the writer has not yet committed its tables.
    bool readCommitted();

    TraceBuilder &builder() { return m_builder; }

    // Whether the events can be handed on a chunk at a time rather than read whole.
    bool canStream() const { return m_version >= 2; }

    // The trace without its events, then the events a chunk at a time.
    std::shared_ptr<const Trace> stream(const TraceReader::ChunkStart &start, const TraceReader::ChunkConsumer &consume);

private:
    std::shared_ptr<const Trace> finish();

    // Runs `work`, turning every problem but a cancel into an ImportError naming the file.
    template<typename Work>
    std::invoke_result_t<Work> guarded(Work work);

    // The file is data: it is opened so that nothing in it runs and nothing is written beside it.
    void open();

    // Progress is counted in rows, an event counting as one: the events table is most of
    // the file. The counts are only for the bar; the rows are checked as they are read.
    void countRows();

    // One row read; now and then, progress (and a look at the cancel flag).
    void rowRead(std::size_t rows = 1);

    void reportProgress();

    [[noreturn]] void damaged(std::string problem) const;

    // The file's tables but the memory events, in the order they are read.
    static const std::array<void (NativeFileReader::*)(), 11> kTableReaders;

    void checkHeader();

    void checkImageHeader();

    void checkIdentity(std::uint32_t applicationId, std::uint32_t version) const;

    void checkVersionAndTables();

    // Exactly the tables PeakLens writes, each as it defines them: a generated column, a
    // view, a trigger or an index on an expression would make reading run the file's own SQL.
    void checkSchema();

    void readMeta();

    void readLanes();

    void readLayers();

    void readStacks();

    void readKernelNames();
    void readStageNames();

    void readEvents();

    void readReserved();

    Range rangeOf(SqliteStatement &rows) const;

    void readRanges();

    void readSteps();

    void readKernels();

    void readMarkers();

    // The rows of an append-only table not yet read: those with a higher rowid.
    static std::string after(std::int64_t rowid) { return " WHERE rowid > " + std::to_string(rowid); }
    // What more a timed table's rows must meet: to overlap the read's time span, from
    // `begin` to `end` (its columns).
    std::string within(std::string_view begin, std::string_view end) const;

    // Files number their rows 0, 1, 2...; the builder may intern them to other indices.
    void mapId(std::vector<std::uint32_t> &ids, std::int64_t fileId, std::uint32_t id, std::string_view what);

    std::uint32_t lookup(const std::vector<std::uint32_t> &ids, std::int64_t fileId, std::string_view what) const;

    // Between reports: an events chunk is 65,536 rows, a few milliseconds of reading.
    static constexpr std::size_t kRowsPerReport = 16384;

    std::string m_path;
    std::span<const char> m_image;
    const Progress &m_progress;
    double m_rowsTotal = 1;
    double m_rowsRead = 0;
    double m_reported = 0;
    std::size_t m_rowsSinceReport = 0;
    std::uint64_t m_fileBytes = 0;
    std::int64_t m_version = 0;
    std::unique_ptr<PrivateCopy> m_copy;
    std::unique_ptr<SqliteDatabase> m_db;
    TraceBuilder m_builder;
    std::vector<std::uint32_t> m_laneIds;
    std::vector<std::uint32_t> m_layerIds;
    std::vector<std::uint32_t> m_stackIds;
    std::vector<std::uint32_t> m_kernelNameIds;
    std::vector<std::uint32_t> m_stageNameIds;
    std::vector<std::uint32_t> m_frameIds;
    // What has been read of each table: the last rowid (the last chunk for events). A
    // follower reads on from here; a plain read starts and ends with one pass.
    struct Read
    {
        std::int64_t reserved = 0, ranges = 0, steps = 0, kernels = 0, markers = 0;
        std::int64_t chunk = -1;
    } m_after;
    bool m_follow = false;
    TimeSpan m_timed;
    bool m_readOnce = false;
};

} // namespace peaklens
