// SPDX-License-Identifier: Apache-2.0
#include "tracemirror.h"

#include "core/error.h"
#include "core/trace/metadata.h"
#include "nativefilereader.h"
#include "outputfile.h"
#include "readablefile.h"
#include "schema.h"
#include "sqlitedatabase.h"
#include "tracewriter.h"

#include <sqlite3.h>

#include <array>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <vector>

#include <unistd.h>

namespace peaklens {

namespace {

// The tables copied, in the order a delta holds them. The writer only appends rows to
// most; the others it rewrites (a key's value, a layer's kind learnt late, the figures
// stored once the file is finished), and they are small: they travel whole when changed.
struct MirroredTable
{
    std::string_view name;
    bool rewritten;
};
constexpr std::array<MirroredTable, 14> kTables{{{"meta", true},
                                                 {"lanes", false},
                                                 {"layers", true},
                                                 {"frames", false},
                                                 {"stacks", false},
                                                 {"kernel_names", false},
                                                 {"stage_names", false},
                                                 {"reserved", false},
                                                 {"ranges", false},
                                                 {"steps", false},
                                                 {"kernels", false},
                                                 {"markers", false},
                                                 {"events", false},
                                                 {"figures", true}}};

// A delta: for each table with something new, its index, the column count (the row id
// first, then the table's own) and the row count, then every value as its SQLite type and
// its bytes, little-endian.
void putInteger(std::string &out, std::uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>(value >> (8 * i) & 0xFF);
}

void putBytes(std::string &out, const void *data, std::size_t size)
{
    putInteger(out, size, 4);
    out.append(static_cast<const char *>(data), size);
}

void putValue(std::string &out, const SqliteStatement &row, int column)
{
    const int type = row.type(column);
    out += static_cast<char>(type);
    switch (type) {
    case SQLITE_INTEGER:
        putInteger(out, static_cast<std::uint64_t>(row.integer(column)), 8);
        break;
    case SQLITE_FLOAT:
        putInteger(out, std::bit_cast<std::uint64_t>(row.real(column)), 8);
        break;
    case SQLITE_TEXT: {
        const std::string text = row.text(column);
        putBytes(out, text.data(), text.size());
        break;
    }
    case SQLITE_BLOB: {
        const auto blob = row.blob(column);
        putBytes(out, blob.data(), blob.size());
        break;
    }
    default: // SQLITE_NULL
        break;
    }
}

class DeltaReader
{
public:
    DeltaReader(std::string_view bytes, const std::string &source)
        : m_bytes(bytes)
        , m_source(source)
    {
    }

    bool atEnd() const { return m_at == m_bytes.size(); }

    std::uint64_t integer(int bytes)
    {
        need(static_cast<std::size_t>(bytes));
        std::uint64_t value = 0;
        for (int i = 0; i < bytes; ++i)
            value |= std::uint64_t(static_cast<unsigned char>(m_bytes[m_at + static_cast<std::size_t>(i)])) << (8 * i);
        m_at += static_cast<std::size_t>(bytes);
        return value;
    }

    std::string_view bytes()
    {
        const auto size = static_cast<std::size_t>(integer(4));
        need(size);
        const std::string_view out = m_bytes.substr(m_at, size);
        m_at += size;
        return out;
    }

    // Binds the next value to parameter `index` of `insert`.
    void bindValue(SqliteStatement &insert, int index)
    {
        switch (static_cast<int>(integer(1))) {
        case SQLITE_INTEGER:
            insert.bind(index, static_cast<std::int64_t>(integer(8)));
            break;
        case SQLITE_FLOAT:
            insert.bindReal(index, std::bit_cast<double>(integer(8)));
            break;
        case SQLITE_TEXT:
            insert.bind(index, bytes());
            break;
        case SQLITE_BLOB: {
            const std::string_view blob = bytes();
            insert.bind(index, std::as_bytes(std::span(blob.data(), blob.size())));
            break;
        }
        case SQLITE_NULL:
            insert.bindNull(index);
            break;
        default:
            damaged("a value of an unknown type");
        }
    }

    [[noreturn]] void damaged(const std::string &what) const
    {
        throw ImportError(m_source, "arrived damaged: its copy met " + what + " at byte " + std::to_string(m_at)
                                        + " of an update; what arrived before it is kept.");
    }

private:
    void need(std::size_t size) const
    {
        if (m_bytes.size() - m_at < size)
            damaged("the end of an update too early");
    }

    std::string_view m_bytes;
    const std::string &m_source;
    std::size_t m_at = 0;
};

// Row ids may be 0 or less (a lane's id is its row id): before the first, nothing was sent.
constexpr std::int64_t kNothingSent = INT64_MIN;

std::string selectRows(std::string_view table, std::int64_t after)
{
    return "SELECT rowid, * FROM " + std::string(table)
           + (after != kNothingSent ? " WHERE rowid > " + std::to_string(after) : std::string()) + " ORDER BY rowid";
}

} // namespace

MirrorSource::MirrorSource(std::string path)
    : m_path(std::move(path))
{
}

std::string MirrorSource::readDelta()
{
    std::error_code ec;
    if (std::filesystem::file_size(m_path, ec) < kHeaderSize || ec) {
        requireReadableFile(m_path);
        return {}; // just created: no header yet
    }
    std::string delta;
    try {
        // A reader beside a live writer, through its log, as a follower reads.
        SqliteDatabase db(m_path, SQLITE_OPEN_READONLY);
        sqlite3_busy_timeout(db.handle(), 5000);
        db.restrictToReading();
        db.exec("BEGIN");
        if (db.queryInteger("SELECT count(*) FROM sqlite_schema") == 0)
            return {};
        if (db.queryInteger("PRAGMA application_id") != schema::kApplicationId
            || db.queryInteger("PRAGMA user_version") != schema::kFormatVersion)
            throw ImportError(m_path, "is not a trace of format " + std::to_string(schema::kFormatVersion)
                                          + ", the one this PeakLens writes; only its own traces are followed from afar.");
        for (std::size_t table = 0; table < kTables.size(); ++table) {
            const MirroredTable &mirrored = kTables[table];
            std::int64_t &after = m_after.try_emplace(std::string(mirrored.name), kNothingSent).first->second;
            auto rows = db.prepare(selectRows(mirrored.name, mirrored.rewritten ? kNothingSent : after));
            std::string block;
            std::uint32_t count = 0;
            for (; rows.step(); ++count) {
                for (int column = 0; column < rows.columns(); ++column)
                    putValue(block, rows, column);
                after = rows.integer(0);
            }
            if (mirrored.rewritten) {
                std::string &sent = m_sent[std::string(mirrored.name)];
                if (block == sent)
                    continue;
                sent = block;
            } else if (count == 0) {
                continue;
            }
            putInteger(delta, table, 1);
            putInteger(delta, static_cast<std::uint64_t>(rows.columns()), 4);
            putInteger(delta, count, 4);
            delta += block;
        }
        db.exec("COMMIT");
    } catch (const ImportError &) {
        throw;
    } catch (const Error &error) {
        throw ImportError(m_path, std::string("cannot be followed: ") + error.what());
    }
    return delta;
}

MirrorSink::MirrorSink(std::string path, std::string source)
    : m_path(std::move(path))
    , m_source(std::move(source))
    , m_db(createTraceDatabase(m_path, TraceWriter::Mode::Streaming))
{
    // A follower holds the copy for a few milliseconds at a time.
    sqlite3_busy_timeout(m_db->handle(), 10000);
    // Written from its first moment, by this process, as a writer's own file says at once:
    // a reader that opens it before the first rows arrive follows it rather than taking
    // it for a finished file with nothing in it. The original's meta replaces this.
    m_db->exec("BEGIN");
    m_db->prepare("INSERT INTO meta VALUES(?, ?)").bind(1, metakey::WriterState).bind(2, std::string("writing")).run();
    m_db->prepare("INSERT INTO meta VALUES(?, ?)")
        .bind(1, metakey::WriterProcess)
        .bind(2, TraceWriter::hostName() + " " + std::to_string(::getpid()))
        .run();
    m_db->exec("COMMIT");
}

MirrorSink::~MirrorSink()
{
    try {
        close();
    } catch (const Error &) {
        // What was committed stays readable from the log.
    }
}

void MirrorSink::apply(std::string_view delta)
{
    if (!m_db)
        throw FileError(m_path, "is closed; nothing more is written to it.");
    DeltaReader reader(delta, m_source);
    try {
        m_db->exec("BEGIN IMMEDIATE");
        while (!reader.atEnd()) {
            const auto table = reader.integer(1);
            if (table >= kTables.size())
                reader.damaged("table " + std::to_string(table));
            const MirroredTable &mirrored = kTables[table];
            const std::string name(mirrored.name);
            std::vector<std::string> columns;
            for (auto info = m_db->prepare("SELECT name FROM pragma_table_info('" + name + "')"); info.step();)
                columns.push_back(info.text(0));
            const auto width = reader.integer(4);
            if (width != columns.size() + 1)
                reader.damaged(std::to_string(width) + " columns for " + name + ", which has " + std::to_string(columns.size()));
            if (mirrored.rewritten)
                m_db->exec("DELETE FROM " + name);
            std::string sql = "INSERT INTO " + name + "(rowid";
            for (const std::string &column : columns)
                sql.append(", ").append(column);
            sql += ") VALUES(?";
            for (std::size_t column = 0; column < columns.size(); ++column)
                sql += ", ?";
            sql += ")";
            auto insert = m_db->prepare(sql);
            const auto rows = reader.integer(4);
            for (std::uint64_t row = 0; row < rows; ++row) {
                for (int column = 0; column <= static_cast<int>(columns.size()); ++column)
                    reader.bindValue(insert, column + 1);
                insert.run();
            }
            if (name == "meta") {
                // The copy's writer is this process; the original's is kept beside it.
                m_db->prepare("INSERT OR REPLACE INTO meta SELECT ?, value FROM meta WHERE key = ?")
                    .bind(1, metakey::WriterSource)
                    .bind(2, metakey::WriterProcess)
                    .run();
                m_db->prepare("INSERT OR REPLACE INTO meta VALUES(?, ?)")
                    .bind(1, metakey::WriterProcess)
                    .bind(2, TraceWriter::hostName() + " " + std::to_string(::getpid()))
                    .run();
            }
        }
        m_events = static_cast<std::uint64_t>(m_db->queryInteger("SELECT ifnull(sum(count), 0) FROM events"));
        m_db->exec("COMMIT");
    } catch (const Error &error) {
        try {
            m_db->exec("ROLLBACK");
        } catch (const Error &) {
        }
        if (dynamic_cast<const ImportError *>(&error) || dynamic_cast<const FileError *>(&error))
            throw;
        const int system = sqlite3_system_errno(m_db->handle());
        if (system == ENOSPC || system == EFBIG || system == EDQUOT)
            throw FileError(m_path, "could not be written: " + writeProblemText(system) + "; what it holds is kept.");
        reader.damaged(std::string("a row its copy refused (") + error.what() + ")");
    }
}

void MirrorSink::close()
{
    if (!m_db)
        return;
    auto db = std::move(m_db);
    db->close();
}

} // namespace peaklens
