// SPDX-License-Identifier: Apache-2.0
#include "nativefilereader.h"

#include "core/error.h"
#include "core/trace/loadbudget.h"
#include "eventsreader.h"
#include "readablefile.h"
#include "schema.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

namespace peaklens {

namespace {
std::uint64_t fileSize(const std::string &path)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    return ec ? 0 : size;
}

// Whitespace runs as one space: SQLite keeps each CREATE statement as it was written.
std::string normalizedSql(std::string_view sql)
{
    std::string text;
    for (const char c : sql) {
        const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
        if (!space)
            text += c;
        else if (!text.empty() && text.back() != ' ')
            text += ' ';
    }
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

using TableMap = std::map<std::string, std::string, std::less<>>;

// Table name -> its CREATE statement, as PeakLens writes it in that format version.
TableMap tablesIn(std::string_view events, std::string_view more = {}, bool withCommonTables = true)
{
    TableMap map;
    for (std::string_view rest : {withCommonTables ? schema::kCreateTables : std::string_view(), events, more}) {
        for (std::size_t end; (end = rest.find(';')) != std::string_view::npos; rest.remove_prefix(end + 1)) {
            const std::string statement = normalizedSql(rest.substr(0, end));
            const std::size_t nameBegin = std::string_view("CREATE TABLE ").size();
            map.emplace(statement.substr(nameBegin, statement.find('(') - nameBegin), statement);
        }
    }
    return map;
}

const TableMap &expectedTables(std::int64_t version)
{
    // Before format 5, ranges had no stage; before format 4, lanes had no memory pool.
    const auto beforeStages = [](TableMap map) {
        map.insert_or_assign("ranges", tablesIn(schema::kCreateRangesBeforeStages, {}, false).at("ranges"));
        map.erase("stage_names");
        return map;
    };
    const auto beforePools = [&](TableMap map) {
        map.insert_or_assign("lanes", tablesIn(schema::kCreateLanesBeforePools, {}, false).at("lanes"));
        return beforeStages(std::move(map));
    };
    static const TableMap format1 = beforePools(tablesIn(schema::kCreateEventsV1));
    static const TableMap format2 = beforePools(tablesIn(schema::kCreateEvents));
    static const TableMap format3 = beforePools(tablesIn(schema::kCreateEvents, schema::kCreateFigures));
    static const TableMap format4 = beforeStages(tablesIn(schema::kCreateEvents, schema::kCreateFigures));
    static const TableMap format5 = tablesIn(schema::kCreateEvents, schema::kCreateFigures);
    return version == 1 ? format1 : version == 2 ? format2 : version == 3 ? format3 : version == 4 ? format4 : format5;
}

// Reads one file; every problem becomes an ImportError naming it.

} // namespace

const std::array<void (NativeFileReader::*)(), 11> NativeFileReader::kTableReaders{
    &NativeFileReader::readMeta,     &NativeFileReader::readLanes,       &NativeFileReader::readLayers,
    &NativeFileReader::readStacks,   &NativeFileReader::readKernelNames, &NativeFileReader::readStageNames,
    &NativeFileReader::readReserved, &NativeFileReader::readRanges,      &NativeFileReader::readSteps,
    &NativeFileReader::readKernels,  &NativeFileReader::readMarkers};

// Runs `work`, turning every problem but a cancel into an ImportError naming the file.
template<typename Work>
std::invoke_result_t<Work> NativeFileReader::guarded(Work work)
{
    try {
        return work();
    } catch (const ImportError &) {
        throw;
    } catch (const Cancelled &) {
        throw;
    } catch (const Error &error) {
        // An interrupted statement is a cancelled load or one out of time: say so rather
        // than "damaged".
        m_progress.throwIfCancelled();
        LoadBudget::checkTime();
        damaged(error.what());
    }
}

NativeFileReader::NativeFileReader(std::string path, std::span<const char> image, const Progress &progress)
    : m_path(std::move(path))
    , m_image(image)
    , m_progress(progress)
{
}

std::shared_ptr<const Trace> NativeFileReader::read()
{
    readTables();
    return guarded([this] {
        readEvents();
        return finish();
    });
}

void NativeFileReader::readTables()
{
    if (m_image.data())
        checkImageHeader();
    else
        checkHeader();
    guarded([this] {
        open();
        checkVersionAndTables();
        countRows();
        // Each part of the file in turn, with a look at the cancel flag between them.
        for (const auto table : kTableReaders) {
            (this->*table)();
            reportProgress();
        }
        return 0;
    });
}

std::optional<std::uint64_t> NativeFileReader::eventCount()
{
    checkHeader();
    if (PrivateCopy::isNeededFor(m_path))
        return std::nullopt;
    return guarded([this] {
        open();
        checkVersionAndTables();
        return std::optional(EventsReader(*m_db, static_cast<int>(m_version)).measure().events);
    });
}

std::optional<TraceReader::StreamStart> NativeFileReader::chunkRows()
{
    checkHeader();
    if (PrivateCopy::isNeededFor(m_path))
        return std::nullopt;
    return guarded([this]() -> std::optional<TraceReader::StreamStart> {
        open();
        checkVersionAndTables();
        EventsReader events(*m_db, static_cast<int>(m_version));
        TraceReader::StreamStart rows;
        rows.events = events.measure().events;
        rows.peaks = events.peaksFromTotals();
        rows.levels = events.levelsFromTotals();
        return rows;
    });
}

bool NativeFileReader::readCommitted()
{
    m_follow = true;
    if (fileSize(m_path) < kHeaderSize && !m_readOnce) {
        requireReadableFile(m_path);
        return false;
    }
    checkHeader();
    return guarded([this] {
        open();
        m_db->exec("BEGIN");
        if (!m_readOnce && m_db->queryInteger("SELECT count(*) FROM sqlite_schema") == 0) {
            m_db.reset();
            return false;
        }
        checkVersionAndTables();
        for (const auto table : kTableReaders)
            (this->*table)();
        readEvents();
        m_db->exec("COMMIT");
        m_db.reset();
        m_readOnce = true;
        return true;
    });
}

std::shared_ptr<const Trace> NativeFileReader::stream(const TraceReader::ChunkStart &start,
                                                      const TraceReader::ChunkConsumer &consume)
{
    return guarded([&] {
        EventsReader events(*m_db, static_cast<int>(m_version));
        TraceReader::StreamStart known;
        known.events = events.measure().events;
        known.peaks = events.peaksFromTotals();
        known.levels = events.levelsFromTotals();
        if (m_version >= 3) {
            auto figures = m_db->prepare("SELECT analysis, summary FROM figures WHERE events = " + std::to_string(known.events)
                                         + " AND typeof(summary) = 'blob'");
            if (figures.step()) {
                const auto bytes = figures.blob(1);
                known.figures = TraceReader::StoredFigures{
                    figures.integer(0), std::string(reinterpret_cast<const char *>(bytes.data()), bytes.size())};
            }
        }
        auto trace = m_builder.finish();
        if (!start(*trace, known))
            return trace;
        events.stream(
            FileIds{m_laneIds, m_layerIds, m_stackIds},
            [&](MemoryEvents &chunk, std::size_t first) { consume(*trace, chunk, first); },
            [this](std::size_t count) { rowRead(count); });
        m_progress.tick(1.0);
        return trace;
    });
}

std::shared_ptr<const Trace> NativeFileReader::tables()
{
    readTables();
    return guarded([this] { return finish(); });
}

std::string NativeFileReader::within(std::string_view begin, std::string_view end) const
{
    if (m_timed.whole())
        return {};
    if (m_timed.empty())
        return " AND 0";
    return " AND " + std::string(end) + " >= " + std::to_string(m_timed.beginNs) + " AND " + std::string(begin)
           + " <= " + std::to_string(m_timed.endNs);
}

std::shared_ptr<const Trace> NativeFileReader::finish()
{
    auto trace = m_builder.finish();
    m_progress.tick(1.0);
    return trace;
}

void NativeFileReader::open()
{
    if (m_image.data()) {
        m_db = SqliteDatabase::fromImage(m_image);
    } else if (m_follow) {
        // A reader beside a live writer, as SQLite's own readers are: through the
        // writer's log and its shared index, never writing to the trace.
        m_db = std::make_unique<SqliteDatabase>(m_path, SQLITE_OPEN_READONLY);
        // A writer finishing the file holds it for a moment.
        sqlite3_busy_timeout(m_db->handle(), 5000);
    } else if (PrivateCopy::isNeededFor(m_path)) {
        m_copy = std::make_unique<PrivateCopy>(m_path);
        // Read-write, so SQLite can replay the log or roll the journal back in the copy.
        m_db = std::make_unique<SqliteDatabase>(m_copy->path(), SQLITE_OPEN_READWRITE);
    } else {
        m_db = SqliteDatabase::openImmutable(m_path);
    }
    m_db->restrictToReading();
    // A statement can run long (a big table, a log to replay): the handler ends it
    // within a millisecond once the load is cancelled or out of time.
    m_db->interruptWhen([this] { return m_progress.isCancelled() || LoadBudget::timeIsUp(); });
}

void NativeFileReader::countRows()
{
    static constexpr std::array<std::string_view, 12> tables = {"meta",   "lanes",        "layers",      "frames",
                                                                "stacks", "kernel_names", "stage_names", "reserved",
                                                                "ranges", "steps",        "kernels",     "markers"};
    double rows = 0;
    for (const std::string_view table : tables) {
        if (table != "stage_names" || m_version >= 5)
            rows += static_cast<double>(m_db->queryInteger("SELECT count(*) FROM " + std::string(table)));
    }
    // total(): a sum that cannot overflow, whatever a damaged file claims.
    auto events = m_db->prepare("SELECT total(max(count, 0)) FROM events");
    if (events.step())
        rows += events.real(0);
    m_rowsTotal = std::max(rows, 1.0);
    reportProgress();
}

void NativeFileReader::rowRead(std::size_t rows)
{
    m_rowsRead += static_cast<double>(rows);
    m_rowsSinceReport += rows;
    if (m_rowsSinceReport >= kRowsPerReport)
        reportProgress();
}

void NativeFileReader::reportProgress()
{
    m_rowsSinceReport = 0;
    // Never backwards, never past the end, even when a damaged file miscounts.
    m_reported = std::max(m_reported, std::min(m_rowsRead / m_rowsTotal, 1.0));
    m_progress.tick(m_reported);
}

void NativeFileReader::checkHeader()
{
    requireReadableFile(m_path);
    std::error_code ec;
    std::ifstream file(m_path, std::ios::binary);
    std::array<std::byte, kHeaderSize> header{};
    file.read(reinterpret_cast<char *>(header.data()), header.size());
    const auto got = static_cast<std::size_t>(file.gcount());
    const auto span = std::span<const std::byte>(header.data(), got);
    if (!hasSqliteMagic(span))
        throw ImportError(m_path, "is not a PeakLens trace: it is not an SQLite database.");
    if (got < kHeaderSize)
        throw ImportError(m_path, "is truncated: it ends inside its " + std::to_string(kHeaderSize) + "-byte header.");
    m_fileBytes = fileSize(m_path) + fileSize(m_path + "-wal");
    // A trace whose writer was killed keeps its newest pages, header included, in the
    // write-ahead log beside it, as does one still being written (whose log may not
    // exist yet); SQLite's own answers are checked once it is open.
    if (m_follow || std::filesystem::exists(m_path + "-wal", ec))
        return;
    checkIdentity(bigEndian32(span, 68), bigEndian32(span, 60));
    // Without a write-ahead log beside it, the file must be as long as its header says.
    std::uint32_t pageSize = (std::to_integer<std::uint32_t>(span[16]) << 8) | std::to_integer<std::uint32_t>(span[17]);
    if (pageSize == 1)
        pageSize = 65536;
    const std::uint32_t pageCount = bigEndian32(span, 28);
    const bool pageCountValid = bigEndian32(span, 24) == bigEndian32(span, 92);
    const std::uint64_t expected = std::uint64_t(pageSize) * pageCount;
    if (pageCountValid && m_fileBytes < expected)
        throw ImportError(m_path, "is truncated: it has " + std::to_string(m_fileBytes) + " bytes, but its header says "
                                      + std::to_string(expected) + ". It was probably cut off while being copied or downloaded.");
}

void NativeFileReader::checkImageHeader()
{
    const auto span = std::as_bytes(m_image.first(std::min(m_image.size(), kHeaderSize)));
    if (!hasSqliteMagic(span))
        throw ImportError(m_path, "is not a PeakLens trace: it is not an SQLite database.");
    if (span.size() < kHeaderSize)
        throw ImportError(m_path, "is truncated: it ends inside its " + std::to_string(kHeaderSize) + "-byte header.");
    m_fileBytes = m_image.size();
    checkIdentity(bigEndian32(span, 68), bigEndian32(span, 60));
}

void NativeFileReader::checkIdentity(std::uint32_t applicationId, std::uint32_t version) const
{
    if (applicationId != static_cast<std::uint32_t>(schema::kApplicationId))
        throw ImportError(m_path, "is an SQLite database, but not a PeakLens trace.");
    if (version > static_cast<std::uint32_t>(schema::kFormatVersion))
        throw ImportError(m_path, "was written by a newer PeakLens (file format " + std::to_string(version)
                                      + "; this build reads up to " + std::to_string(schema::kFormatVersion)
                                      + "). Update PeakLens to open it.");
}

void NativeFileReader::checkVersionAndTables()
{
    // A writer that has just begun: its header (or only its log) exists, its tables not yet.
    std::error_code ec;
    if (!m_follow && m_db->queryInteger("SELECT count(*) FROM sqlite_schema") == 0
        && (m_db->queryInteger("PRAGMA application_id") == schema::kApplicationId
            || std::filesystem::exists(m_path + "-wal", ec)))
        throw ImportError(m_path, "holds nothing yet: its writer has not committed its first rows. Open it again in a "
                                  "moment, or follow it as it is written with `peaklens-cli watch`.");
    m_version = m_db->queryInteger("PRAGMA user_version");
    checkIdentity(static_cast<std::uint32_t>(m_db->queryInteger("PRAGMA application_id")), static_cast<std::uint32_t>(m_version));
    if (m_version < schema::kOldestFormatVersion || m_version > schema::kFormatVersion)
        damaged("its format version is " + std::to_string(m_version));
    checkSchema();
}

void NativeFileReader::checkSchema()
{
    const TableMap &expected = expectedTables(m_version);
    std::size_t tables = 0;
    auto rows = m_db->prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema");
    while (rows.step()) {
        const std::string type = rows.text(0);
        const std::string name = rows.text(1);
        const auto table = expected.find(name);
        if (type == "table" && table != expected.end()) {
            if (normalizedSql(rows.text(3)) != table->second)
                damaged("its table \"" + name + "\" is not defined as PeakLens defines it");
            ++tables;
        } else if (type != "index" || !rows.isNull(3) || !name.starts_with("sqlite_autoindex_")
                   || !expected.contains(rows.text(2))) {
            std::string what = "it has the ";
            what.append(type).append(" \"").append(name).append("\", which PeakLens does not write");
            damaged(what);
        }
    }
    if (tables != expected.size()) {
        for (const auto &[table, statement] : expected) {
            if (!m_db->hasTable(table))
                damaged("the table \"" + table + "\" is missing");
        }
    }
}

void NativeFileReader::readMeta()
{
    auto rows = m_db->prepare("SELECT key, value FROM meta");
    for (; rows.step(); rowRead())
        m_builder.setMeta(rows.text(0), rows.text(1));
}

void NativeFileReader::readLanes()
{
    // Before format 4, lanes had no pool: every lane is in the default one.
    const std::string pools = m_version >= 4 ? ", pool_graph, pool_user" : ", 0, 0";
    auto rows = m_db->prepare("SELECT id, device_type, device, stream" + pools
                              + " FROM lanes WHERE id >= " + std::to_string(m_laneIds.size()) + " ORDER BY id");
    for (; rows.step(); rowRead()) {
        const auto type = rows.integer(1);
        const auto index = rows.integer(2);
        if (type != static_cast<int>(DeviceType::Cpu) && type != static_cast<int>(DeviceType::Cuda))
            damaged("lane " + std::to_string(rows.integer(0)) + " has the unknown device type " + std::to_string(type));
        if (index < 0 || index > INT16_MAX)
            damaged("lane " + std::to_string(rows.integer(0)) + " has the device index " + std::to_string(index));
        const Lane lane{Device{static_cast<DeviceType>(type), static_cast<std::int16_t>(index)},
                        static_cast<std::uint64_t>(rows.integer(3)), MemoryPool{rows.integer(4), rows.integer(5)}};
        mapId(m_laneIds, rows.integer(0), m_builder.lane(lane), "lane");
    }
}

void NativeFileReader::readLayers()
{
    // All of them each time: a writer may give a layer its kind after its ranges.
    auto rows = m_db->prepare("SELECT id, path, kind, parameter_bytes FROM layers ORDER BY id");
    for (; rows.step(); rowRead()) {
        const std::uint32_t layer = m_builder.layer(rows.text(1));
        m_builder.setLayerInfo(layer, rows.text(2), rows.integer(3));
        const auto id = rows.integer(0);
        if (id >= 0 && id < static_cast<std::int64_t>(m_layerIds.size())) {
            if (m_layerIds[static_cast<std::size_t>(id)] != layer)
                damaged("layer " + std::to_string(id) + " changed its path while the file was written");
        } else {
            mapId(m_layerIds, id, layer, "layer");
        }
    }
}

void NativeFileReader::readStacks()
{
    auto frames = m_db->prepare("SELECT id, function, file, line FROM frames WHERE id >= " + std::to_string(m_frameIds.size())
                                + " ORDER BY id");
    for (; frames.step(); rowRead())
        mapId(m_frameIds, frames.integer(0),
              m_builder.stacks().internFrame(Frame{frames.text(1), frames.text(2), static_cast<std::int32_t>(frames.integer(3))}),
              "frame");
    if (m_stackIds.empty())
        m_stackIds.assign(1, StackTable::kEmptyStack);
    auto stacks =
        m_db->prepare("SELECT id, parent, frame FROM stacks WHERE id >= " + std::to_string(m_stackIds.size()) + " ORDER BY id");
    for (; stacks.step(); rowRead()) {
        const auto parent = stacks.integer(1);
        if (parent < 0 || parent >= stacks.integer(0))
            damaged("stack " + std::to_string(stacks.integer(0)) + " has a bad parent");
        const auto frame = lookup(m_frameIds, stacks.integer(2), "frame");
        const std::uint32_t parentId = lookup(m_stackIds, parent, "stack");
        mapId(m_stackIds, stacks.integer(0), m_builder.stacks().internStack(parentId, frame), "stack");
    }
}

void NativeFileReader::readKernelNames()
{
    auto rows =
        m_db->prepare("SELECT id, name FROM kernel_names WHERE id >= " + std::to_string(m_kernelNameIds.size()) + " ORDER BY id");
    for (; rows.step(); rowRead())
        mapId(m_kernelNameIds, rows.integer(0), m_builder.kernelName(rows.text(1)), "kernel name");
}

void NativeFileReader::readStageNames()
{
    if (m_version < 5)
        return;
    auto rows =
        m_db->prepare("SELECT id, name FROM stage_names WHERE id >= " + std::to_string(m_stageNameIds.size()) + " ORDER BY id");
    for (; rows.step(); rowRead())
        mapId(m_stageNameIds, rows.integer(0), m_builder.stageName(rows.text(1)), "stage name");
}

void NativeFileReader::readEvents()
{
    EventsReader events(*m_db, static_cast<int>(m_version), m_after.chunk);
    const EventsTableSize size = events.measure();
    m_after.chunk = size.lastChunk;
    // Compressed chunks count at their plain size, as a .gz file counts inflated.
    if (m_version >= 2)
        LoadBudget::addInputBytes(size.plainBytes);
    else if (size.plainBytes > m_fileBytes)
        damaged("it claims more events than the file can hold");
    events.read(FileIds{m_laneIds, m_layerIds, m_stackIds}, m_builder, [this](std::size_t count) { rowRead(count); });
}

void NativeFileReader::readReserved()
{
    auto rows = m_db->prepare("SELECT t_ns, delta_bytes, addr, lane, rowid FROM reserved" + after(m_after.reserved));
    for (; rows.step(); rowRead()) {
        m_builder.addReserved(ReservedEvent{rows.integer(0), rows.integer(1), static_cast<std::uint64_t>(rows.integer(2)),
                                            lookup(m_laneIds, rows.integer(3), "lane")});
        m_after.reserved = rows.integer(4);
    }
}

Range NativeFileReader::rangeOf(SqliteStatement &rows) const
{
    Range range;
    range.layer = rows.isNull(0) ? kNoLayer : lookup(m_layerIds, rows.integer(0), "layer");
    const auto phase = rows.integer(1);
    if (phase < 0 || phase >= kPhaseCount)
        damaged("a range has the unknown phase " + std::to_string(phase));
    range.phase = static_cast<Phase>(phase);
    range.step = rows.isNull(2) ? kNoStep : rows.integer(2);
    range.beginNs = rows.integer(3);
    range.endNs = rows.integer(4);
    range.thread = static_cast<std::uint32_t>(rows.integer(5));
    range.stage = rows.isNull(7) ? kNoStage : lookup(m_stageNameIds, rows.integer(7), "stage name");
    return range;
}

void NativeFileReader::readRanges()
{
    const std::string select = std::string("SELECT layer, phase, step, t_begin_ns, t_end_ns, thread, rowid, ")
                               + (m_version >= 5 ? "stage" : "NULL") + " FROM ranges ";
    // A long recording has millions: where the file is read in place, the later half is
    // read on another core through a connection of its own.
    static constexpr std::int64_t kWorthSplitting = 1 << 18;
    const std::string timed = within("t_begin_ns", "t_end_ns");
    std::future<std::vector<Range>> later;
    std::int64_t split = INT64_MAX;
    if (!m_image.data() && !m_copy && !m_follow) {
        if (const std::int64_t last = m_db->queryInteger("SELECT ifnull(max(rowid), 0) FROM ranges"); last >= kWorthSplitting) {
            split = last / 2;
            later = std::async(std::launch::async, [this, split, timed, select] {
                const auto db = SqliteDatabase::openImmutable(m_path);
                db->restrictToReading();
                db->interruptWhen([this] { return m_progress.isCancelled(); });
                auto rows = db->prepare(select + "WHERE rowid > " + std::to_string(split) + timed);
                std::vector<Range> ranges;
                while (rows.step())
                    ranges.push_back(rangeOf(rows));
                return ranges;
            });
        }
    }
    auto rows = m_db->prepare(select + "WHERE rowid <= " + std::to_string(split) + " AND rowid > "
                              + std::to_string(m_after.ranges) + timed);
    for (; rows.step(); rowRead()) {
        m_builder.addRange(rangeOf(rows));
        m_after.ranges = rows.integer(6);
    }
    if (later.valid()) {
        for (const Range &range : later.get()) {
            m_builder.addRange(range);
            rowRead();
        }
    }
}

void NativeFileReader::readSteps()
{
    auto rows = m_db->prepare("SELECT number, t_begin_ns, t_end_ns, rowid FROM steps" + after(m_after.steps)
                              + within("t_begin_ns", "t_end_ns"));
    for (; rows.step(); rowRead()) {
        m_builder.addStep(Step{rows.integer(0), rows.integer(1), rows.integer(2)});
        m_after.steps = rows.integer(3);
    }
}

void NativeFileReader::readKernels()
{
    auto rows = m_db->prepare("SELECT name, lane, t_begin_ns, t_end_ns, rowid FROM kernels" + after(m_after.kernels)
                              + within("t_begin_ns", "t_end_ns"));
    for (; rows.step(); rowRead()) {
        m_builder.addKernel(Kernel{lookup(m_kernelNameIds, rows.integer(0), "kernel name"),
                                   lookup(m_laneIds, rows.integer(1), "lane"), rows.integer(2), rows.integer(3)});
        m_after.kernels = rows.integer(4);
    }
}

void NativeFileReader::readMarkers()
{
    auto rows =
        m_db->prepare("SELECT t_ns, lane, kind, bytes, rowid FROM markers" + after(m_after.markers) + within("t_ns", "t_ns"));
    for (; rows.step(); rowRead()) {
        m_after.markers = rows.integer(4);
        const auto kind = parseMarkerKind(rows.text(2));
        if (!kind)
            damaged("a marker has the unknown kind \"" + rows.text(2) + "\"");
        m_builder.addMarker(Marker{rows.integer(0), lookup(m_laneIds, rows.integer(1), "lane"), *kind, rows.integer(3)});
    }
}

void NativeFileReader::mapId(std::vector<std::uint32_t> &ids, std::int64_t fileId, std::uint32_t id, std::string_view what)
{
    if (fileId != static_cast<std::int64_t>(ids.size()))
        damaged(std::string(what) + " " + std::to_string(fileId) + " is out of sequence");
    ids.push_back(id);
}

std::uint32_t NativeFileReader::lookup(const std::vector<std::uint32_t> &ids, std::int64_t fileId, std::string_view what) const
{
    if (fileId < 0 || fileId >= static_cast<std::int64_t>(ids.size()))
        damaged("it refers to " + std::string(what) + " " + std::to_string(fileId) + ", which it does not define");
    return ids[static_cast<std::size_t>(fileId)];
}

void NativeFileReader::damaged(std::string problem) const
{
    // SQLite may quote the file's own schema text: its first line says enough.
    problem = problem.substr(0, problem.find('\n'));
    // The model's own sentences ("Its times run...") continue this one.
    if (problem.size() > 1 && std::isupper(static_cast<unsigned char>(problem[0]))
        && std::islower(static_cast<unsigned char>(problem[1])))
        problem[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(problem[0])));
    if (problem.ends_with('.'))
        problem.pop_back();
    if (problem.size() > 200)
        problem = problem.substr(0, 200) + "...";
    throw ImportError(m_path, "is damaged: " + problem + ".");
}

} // namespace peaklens
