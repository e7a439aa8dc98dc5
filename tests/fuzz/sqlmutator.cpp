// SPDX-License-Identifier: Apache-2.0
#include "sqlmutator.h"

#include "core/format/eventchunk.h"
#include "core/format/schema.h"
#include "core/trace/metadata.h"

#include <fuzzer/FuzzedDataProvider.h>
#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

namespace peaklens::fuzz {

namespace {

// Enough for a few edits that depend on each other; longer programs only cost time.
constexpr int kMaxSteps = 16;

// Where range checks tend to be off by one or to overflow: index and width limits of
// the reader and the trace model, and the ends of each integer type.
constexpr std::int64_t kEdgeIntegers[] = {
    0,
    1,
    -1,
    2,
    255,
    256,
    1023,
    1024,
    32767,
    32768,
    65535,
    65536,
    (std::int64_t(1) << 22) - 1,
    std::int64_t(1) << 22,
    std::int64_t(1) << 24,
    INT32_MAX,
    std::int64_t(INT32_MAX) + 1,
    INT32_MIN,
    UINT32_MAX,
    std::int64_t(UINT32_MAX) + 1,
    std::int64_t(1) << 48,
    (std::int64_t(1) << 48) + 1,
    -(std::int64_t(1) << 48) - 1,
    INT64_MAX,
    INT64_MIN,
    INT64_MIN + 1,
    INT64_MAX - 1,
    schema::kFormatVersion,
    schema::kFormatVersion + 1,
    schema::kApplicationId,
    static_cast<std::int64_t>(schema::kEventsPerChunk),
    schema::kFileNoLayer,
};

// Texts the reader or the trace model give a meaning to, and a few that no name should hold.
constexpr std::string_view kTexts[] = {
    metakey::Categories,
    "lifetime",
    metakey::Checkpoint,
    metakey::CheckpointCosts,
    metakey::SourceFormat,
    metakey::Description,
    metakey::ReplaySpec,
    metakey::ReplayOptions,
    metakey::AllocatorView,
    "segments",
    "oom",
    "snapshot",
    "a",
    "a.b",
    "a.b.c",
    ".",
    "..",
    ".a",
    "a.",
    "a..b",
    "",
    "{\"a\":1}",
    "[1,2",
    "none",
    "every:2",
    "blocks.0,blocks.1",
    "\xff\xfe",
    "\xe2\x80\xae",
    "</script>",
    "\r\n",
    "\xc0\x80",
};

// Expressions for generated columns, views and indexes: failing, huge, or harmless.
constexpr std::string_view kExpressions[] = {
    "1/0",
    "NULL",
    "'x'",
    "-1",
    "abs(-9223372036854775807 - 1)",
    "zeroblob(2000000000)",
    "randomblob(100000)",
    "printf('%.*c', 1000000, 'x')",
    "rowid",
    "length(sql)",
};

struct SqlValue
{
    enum class Kind { Null, Integer, Real, Text, Blob, ZeroBlob };
    Kind kind = Kind::Null;
    std::int64_t integer = 0;
    double real = 0;
    std::string bytes;
};

std::string repeatedTo(const std::string &pattern, std::size_t size)
{
    std::string out(size, '\0');
    if (!pattern.empty()) {
        for (std::size_t i = 0; i < size; ++i)
            out[i] = pattern[i % pattern.size()];
    }
    return out;
}

SqlValue consumeValue(FuzzedDataProvider &program)
{
    SqlValue value;
    using Kind = SqlValue::Kind;
    switch (program.ConsumeIntegralInRange(0, 10)) {
    case 0:
        break;
    case 1:
        value.kind = Kind::Integer;
        value.integer = program.PickValueInArray(kEdgeIntegers);
        break;
    case 2:
        value.kind = Kind::Integer;
        value.integer = program.ConsumeIntegralInRange<std::int64_t>(-2, 80); // row ids, counts, enum values
        break;
    case 3:
        value.kind = Kind::Integer;
        value.integer = program.ConsumeIntegral<std::int64_t>();
        break;
    case 4:
        value.kind = Kind::Real;
        value.real = program.ConsumeBool()
                         ? program.ConsumeFloatingPoint<double>()
                         : program.PickValueInArray({0.5, -0.0, 1e300, -1e300, 9.3e18, std::numeric_limits<double>::infinity()});
        break;
    case 5:
        value.kind = Kind::Text;
        value.bytes = std::string(program.PickValueInArray(kTexts));
        break;
    case 6:
        value.kind = Kind::Text;
        value.bytes = program.ConsumeRandomLengthString(64);
        break;
    case 7:
        value.kind = Kind::Blob;
        value.bytes = program.ConsumeRandomLengthString(64);
        break;
    case 8: {
        // Long text: past the reader's limits on names, and far past any real one.
        value.kind = Kind::Text;
        const std::string pattern = program.ConsumeRandomLengthString(8);
        value.bytes =
            repeatedTo(pattern.empty() ? std::string("a.") : pattern, program.ConsumeIntegralInRange<std::size_t>(0, 1 << 18));
        break;
    }
    case 9:
        value.kind = Kind::ZeroBlob;
        value.integer = program.ConsumeIntegralInRange<std::int64_t>(0, 1 << 20);
        break;
    default:
        value.kind = Kind::Text;
        value.bytes = std::to_string(program.ConsumeIntegralInRange<int>(-2, 80)); // a number as text
        break;
    }
    return value;
}

void bind(sqlite3_stmt *statement, int index, const SqlValue &value)
{
    switch (value.kind) {
    case SqlValue::Kind::Null:
        sqlite3_bind_null(statement, index);
        break;
    case SqlValue::Kind::Integer:
        sqlite3_bind_int64(statement, index, value.integer);
        break;
    case SqlValue::Kind::Real:
        sqlite3_bind_double(statement, index, value.real);
        break;
    case SqlValue::Kind::Text:
        sqlite3_bind_text64(statement, index, value.bytes.data(), value.bytes.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        break;
    case SqlValue::Kind::Blob:
        sqlite3_bind_blob64(statement, index, value.bytes.data(), value.bytes.size(), SQLITE_TRANSIENT);
        break;
    case SqlValue::Kind::ZeroBlob:
        sqlite3_bind_zeroblob64(statement, index, static_cast<sqlite3_uint64>(value.integer));
        break;
    }
}

SqlValue integer(std::int64_t number)
{
    SqlValue value;
    value.kind = SqlValue::Kind::Integer;
    value.integer = number;
    return value;
}

SqlValue text(std::string_view bytes)
{
    SqlValue value;
    value.kind = SqlValue::Kind::Text;
    value.bytes = std::string(bytes);
    return value;
}

// One statement with its parameters. An edit SQLite refuses is part of the game: the
// program goes on with the next.
void execute(sqlite3 *db, const std::string &sql, const std::vector<SqlValue> &parameters = {})
{
    sqlite3_stmt *statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &statement, nullptr) == SQLITE_OK && statement) {
        for (std::size_t i = 0; i < parameters.size(); ++i)
            bind(statement, static_cast<int>(i) + 1, parameters[i]);
        while (sqlite3_step(statement) == SQLITE_ROW) { }
    }
    sqlite3_finalize(statement);
}

// Several statements, no parameters.
void executeScript(sqlite3 *db, const std::string &sql)
{
    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
}

std::int64_t queryInteger(sqlite3 *db, const std::string &sql)
{
    sqlite3_stmt *statement = nullptr;
    std::int64_t value = 0;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW)
        value = sqlite3_column_int64(statement, 0);
    sqlite3_finalize(statement);
    return value;
}

std::string quoted(std::string_view name)
{
    std::string out = "\"";
    for (char c : name)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// The row at `offset` in storage order, for UPDATE and DELETE.
std::string rowAt(const std::string &table, int parameter)
{
    return " WHERE rowid = (SELECT rowid FROM " + quoted(table) + " LIMIT 1 OFFSET ?" + std::to_string(parameter) + ")";
}

std::int64_t consumeOffset(FuzzedDataProvider &program)
{
    return program.ConsumeIntegralInRange<std::int64_t>(0, 70); // the sample's largest table has 63 rows
}

// A writable in-memory database over a copy of `image`.
sqlite3 *openImage(std::span<const unsigned char> image)
{
    sqlite3 *db = nullptr;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        sqlite3_close(db);
        return nullptr;
    }
    auto *copy = static_cast<unsigned char *>(sqlite3_malloc64(image.size()));
    if (copy)
        std::memcpy(copy, image.data(), image.size());
    const auto size = static_cast<sqlite3_int64>(image.size());
    if (!copy
        || sqlite3_deserialize(db, "main", copy, size, size, SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
               != SQLITE_OK) {
        sqlite3_close(db);
        return nullptr;
    }
    return db;
}

std::vector<unsigned char> imageOf(sqlite3 *db)
{
    sqlite3_int64 size = 0;
    unsigned char *bytes = db ? sqlite3_serialize(db, "main", &size, 0) : nullptr;
    std::vector<unsigned char> image(bytes, bytes + (bytes ? size : 0));
    sqlite3_free(bytes);
    return image;
}

// After sqlite_schema was edited: the edits take effect in a new connection, as in the reader's.
sqlite3 *reopen(sqlite3 *db)
{
    const std::vector<unsigned char> image = imageOf(db);
    sqlite3_close(db);
    return image.empty() ? nullptr : openImage(image);
}

struct HeaderField
{
    std::size_t offset;
    std::size_t width;
};

// Header fields SQLite reads while opening (https://www.sqlite.org/fileformat.html#the_database_header).
constexpr HeaderField kHeaderFields[] = {
    {18, 1}, {19, 1}, {20, 1}, {21, 1}, {44, 4}, {48, 4}, {52, 4}, {56, 4}, {60, 4}, {64, 4}, {68, 4}, {92, 4},
};

} // namespace

SqlMutator::SqlMutator(std::vector<unsigned char> seed)
    : m_seed(std::move(seed))
{
    sqlite3 *db = nullptr;
    sqlite3_open(":memory:", &db);
    executeScript(db, std::string(schema::kCreateTables));
    sqlite3_stmt *tables = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid", -1, &tables, nullptr);
    while (sqlite3_step(tables) == SQLITE_ROW) {
        Table table;
        table.name = reinterpret_cast<const char *>(sqlite3_column_text(tables, 0));
        sqlite3_stmt *columns = nullptr;
        sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info(?1)", -1, &columns, nullptr);
        sqlite3_bind_text(columns, 1, table.name.c_str(), -1, SQLITE_TRANSIENT);
        while (sqlite3_step(columns) == SQLITE_ROW) {
            table.columns.emplace_back(reinterpret_cast<const char *>(sqlite3_column_text(columns, 0)));
            table.types.emplace_back(reinterpret_cast<const char *>(sqlite3_column_text(columns, 1)));
        }
        sqlite3_finalize(columns);
        m_tables.push_back(std::move(table));
    }
    sqlite3_finalize(tables);
    sqlite3_close(db);
    if (m_tables.empty() || m_seed.empty()) {
        std::fprintf(stderr, "SqlMutator: no tables in schema::kCreateTables, or an empty seed\n");
        std::abort();
    }
}

std::vector<unsigned char> SqlMutator::run(const std::uint8_t *input, std::size_t size) const
{
    FuzzedDataProvider program(input, size);
    sqlite3 *db = openImage(m_seed);
    std::vector<std::pair<HeaderField, std::uint32_t>> headerEdits;
    for (int step = 0; db && step < kMaxSteps && program.remaining_bytes() > 0; ++step) {
        switch (program.ConsumeIntegralInRange(0, 11)) {
        case 0:
            setCell(db, program);
            break;
        case 1:
            deleteRows(db, program);
            break;
        case 2:
            copyRow(db, program);
            break;
        case 3:
            insertRow(db, program);
            break;
        case 4:
            resizeChunk(db, program);
            break;
        case 5:
            setPragma(db, program);
            break;
        case 6:
            editSchemaEntry(db, program);
            db = reopen(db);
            break;
        case 7:
            rewriteTableSql(db, program);
            db = reopen(db);
            break;
        case 8:
            addSchemaObject(db, program);
            break;
        case 9:
            repage(db, program);
            break;
        case 10:
            db = reencodeAsUtf16(db, program);
            break;
        default:
            headerEdits.emplace_back(program.PickValueInArray(kHeaderFields), program.ConsumeIntegral<std::uint32_t>());
            break;
        }
    }
    std::vector<unsigned char> image = imageOf(db);
    sqlite3_close(db);
    // Written into the bytes last: SQLite would refuse to work on most of these.
    for (const auto &[field, value] : headerEdits) {
        for (std::size_t i = 0; i < field.width && field.offset + i < image.size(); ++i)
            image[field.offset + i] = static_cast<unsigned char>(value >> (8 * (field.width - 1 - i)));
    }
    return image;
}

const SqlMutator::Table &SqlMutator::pickTable(FuzzedDataProvider &program) const
{
    return m_tables[program.ConsumeIntegralInRange<std::size_t>(0, m_tables.size() - 1)];
}

namespace {
std::size_t pickIndex(FuzzedDataProvider &program, std::size_t size)
{
    return program.ConsumeIntegralInRange<std::size_t>(0, size - 1);
}
} // namespace

void SqlMutator::setCell(sqlite3 *db, FuzzedDataProvider &program) const
{
    const Table &table = pickTable(program);
    const std::string &column = table.columns[pickIndex(program, table.columns.size())];
    const bool everyRow = program.ConsumeBool();
    const std::int64_t offset = consumeOffset(program);
    std::vector<SqlValue> parameters{consumeValue(program)};
    std::string sql = "UPDATE " + quoted(table.name) + " SET " + quoted(column) + " = ?1";
    if (!everyRow) {
        sql += rowAt(table.name, 2);
        parameters.push_back(integer(offset));
    }
    execute(db, sql, parameters);
}

void SqlMutator::deleteRows(sqlite3 *db, FuzzedDataProvider &program) const
{
    const Table &table = pickTable(program);
    const std::int64_t count = program.ConsumeIntegralInRange<std::int64_t>(1, 100);
    execute(db,
            "DELETE FROM " + quoted(table.name) + " WHERE rowid IN (SELECT rowid FROM " + quoted(table.name)
                + " LIMIT ?1 OFFSET ?2)",
            {integer(count), integer(consumeOffset(program))});
}

// A copy of a row with one column changed: duplicates, and ids out of sequence.
void SqlMutator::copyRow(sqlite3 *db, FuzzedDataProvider &program) const
{
    const Table &table = pickTable(program);
    const std::size_t changed = pickIndex(program, table.columns.size());
    const bool replace = program.ConsumeBool();
    std::string columns, values;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        columns += (c ? ", " : "") + quoted(table.columns[c]);
        values += (c ? ", " : "") + (c == changed ? std::string("?1") : quoted(table.columns[c]));
    }
    execute(db,
            std::string(replace ? "INSERT OR REPLACE" : "INSERT") + " INTO " + quoted(table.name) + "(" + columns + ") SELECT "
                + values + " FROM " + quoted(table.name) + " LIMIT 1 OFFSET ?2",
            {consumeValue(program), integer(consumeOffset(program))});
}

void SqlMutator::insertRow(sqlite3 *db, FuzzedDataProvider &program) const
{
    const Table &table = pickTable(program);
    std::string columns, values;
    std::vector<SqlValue> parameters;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        columns += (c ? ", " : "") + quoted(table.columns[c]);
        values += (c ? ", ?" : "?") + std::to_string(c + 1);
        parameters.push_back(consumeValue(program));
    }
    execute(db, "INSERT INTO " + quoted(table.name) + "(" + columns + ") VALUES(" + values + ")", parameters);
}

// An events chunk coded as the writer codes one, from values that repeat a fuzzed pattern
// (ids mostly 0 to 3, which the sample defines, and the edges of every field), so that
// the decoder gets past the frame and length checks to the values; then, sometimes, one
// byte of the stored columns changed, the frame cut short, or the codec or plain size
// claimed wrongly.
void SqlMutator::resizeChunk(sqlite3 *db, FuzzedDataProvider &program) const
{
    const std::size_t count = program.ConsumeBool() ? program.ConsumeIntegralInRange<std::size_t>(0, 64)
                                                    : program.ConsumeIntegralInRange<std::size_t>(0, 70000);
    const auto pattern = [&program](std::size_t size, auto pick) {
        std::vector<decltype(pick())> values(program.ConsumeIntegralInRange<std::size_t>(1, 4));
        for (auto &value : values)
            value = pick();
        std::vector<decltype(pick())> column(size);
        for (std::size_t i = 0; i < size; ++i)
            column[i] = values[i % values.size()];
        return column;
    };
    const auto id = [&program]() -> std::uint32_t {
        return program.ConsumeBool() ? program.ConsumeIntegralInRange<std::uint32_t>(0, 3)
                                     : static_cast<std::uint32_t>(program.PickValueInArray(kEdgeIntegers));
    };
    const auto edge = [&program]() -> std::int64_t {
        return program.ConsumeBool() ? program.ConsumeIntegralInRange<std::int64_t>(-70000, 70000)
                                     : program.PickValueInArray(kEdgeIntegers);
    };
    eventchunk::Columns columns;
    columns.timeNs = pattern(count, edge);
    std::uint64_t time = 0;                // wrapping: the steps may be anything
    for (std::int64_t &t : columns.timeNs) // the pattern gives the steps between times
        t = static_cast<std::int64_t>(time += static_cast<std::uint64_t>(t));
    columns.deltaBytes = pattern(count, edge);
    for (const std::int64_t addr : pattern(count, edge))
        columns.addr.push_back(static_cast<std::uint64_t>(addr));
    columns.lane = pattern(count, id);
    columns.layer = pattern(count, id);
    columns.stack = pattern(count, id);
    columns.tags = pattern(count, [&program] { return program.ConsumeIntegral<std::uint8_t>(); });
    eventchunk::Stored stored = eventchunk::encode(columns);
    std::int64_t codec = static_cast<std::int64_t>(stored.codec);
    auto plainBytes = static_cast<std::int64_t>(stored.plainBytes);
    switch (program.ConsumeIntegralInRange(0, 5)) {
    case 0:
        if (!stored.bytes.empty())
            stored.bytes[consumeOffset(program) % stored.bytes.size()] ^=
                static_cast<char>(program.ConsumeIntegralInRange(1, 255));
        break;
    case 1:
        stored.bytes.resize(consumeOffset(program) % (stored.bytes.size() + 1));
        break;
    case 2:
        codec = program.ConsumeIntegralInRange<std::int64_t>(-1, 2);
        break;
    case 3:
        plainBytes = program.PickValueInArray(kEdgeIntegers);
        break;
    default: // left as written
        break;
    }
    std::vector<SqlValue> parameters{integer(static_cast<std::int64_t>(count)), integer(codec), integer(plainBytes)};
    SqlValue blob;
    blob.kind = SqlValue::Kind::Blob;
    blob.bytes = std::move(stored.bytes);
    parameters.push_back(std::move(blob));
    if (program.ConsumeBool()) {
        parameters.push_back(integer(program.ConsumeIntegralInRange<std::int64_t>(-1, 3)));
        execute(db, "INSERT INTO events VALUES(?5, ?1, 0, 0, 0, 0, 0, 0, x'', ?2, ?3, ?4)", parameters);
    } else {
        parameters.push_back(integer(consumeOffset(program) % 2));
        execute(db, "UPDATE events SET count = ?1, codec = ?2, plain_bytes = ?3, columns = ?4" + rowAt("events", 5), parameters);
    }
}

void SqlMutator::setPragma(sqlite3 *db, FuzzedDataProvider &program) const
{
    const char *pragma = program.ConsumeBool() ? "user_version" : "application_id";
    const std::int64_t value =
        program.ConsumeBool() ? program.PickValueInArray(kEdgeIntegers) : program.ConsumeIntegral<std::int32_t>();
    executeScript(db, std::string("PRAGMA ") + pragma + " = " + std::to_string(static_cast<std::int32_t>(value)));
}

// One field of one sqlite_schema row: an entry dropped, renamed, retyped, moved onto
// another table's pages, or given other SQL.
void SqlMutator::editSchemaEntry(sqlite3 *db, FuzzedDataProvider &program) const
{
    static constexpr std::string_view kFields[] = {"type", "name", "tbl_name", "rootpage", "sql"};
    static constexpr std::string_view kTypes[] = {"table", "index", "view", "trigger", "TABLE", ""};
    executeScript(db, "PRAGMA writable_schema = ON");
    const std::int64_t offset = program.ConsumeIntegralInRange<std::int64_t>(0, 16);
    if (program.ConsumeIntegralInRange(0, 5) == 0) {
        execute(db, "DELETE FROM sqlite_schema" + rowAt("sqlite_schema", 1), {integer(offset)});
    } else {
        const std::string_view field = program.PickValueInArray(kFields);
        SqlValue value;
        if (program.ConsumeBool()) {
            value = consumeValue(program);
        } else if (field == "type") {
            value = text(program.PickValueInArray(kTypes));
        } else if (field == "rootpage") {
            value = integer(program.ConsumeIntegralInRange<std::int64_t>(0, 60));
        } else if (field == "sql") {
            value = program.ConsumeBool() ? SqlValue{} : text(program.ConsumeRandomLengthString(256));
        } else {
            const Table &table = pickTable(program);
            value = text(program.ConsumeBool() ? table.name : "sqlite_autoindex_" + table.name + "_1");
        }
        execute(db, "UPDATE sqlite_schema SET " + std::string(field) + " = ?1" + rowAt("sqlite_schema", 2),
                {value, integer(offset)});
    }
    executeScript(db, "PRAGMA writable_schema = OFF");
}

// A table's CREATE statement changed in place: generated columns, other types, other
// spelling that means the same, constraints PeakLens never writes.
void SqlMutator::rewriteTableSql(sqlite3 *db, FuzzedDataProvider &program) const
{
    const Table &table = pickTable(program);
    const std::size_t c = pickIndex(program, table.columns.size());
    const std::string column = table.columns[c] + (table.types[c].empty() ? "" : " " + table.types[c]);
    const std::string expression(program.PickValueInArray(kExpressions));
    const std::string rewrites[] = {
        "replace(sql, ?1, ?1 || ' AS (" + expression + ")')",
        "replace(sql, ?1, ?1 || ' AS (" + expression + ") STORED')",
        "substr(sql, 1, length(sql) - 1) || ', fuzz_extra ANY AS (" + expression + "))'",
        "replace(sql, ?1, '" + table.columns[c] + " BLOB')",
        "replace(sql, ?1, '" + table.columns[c] + "')",
        "replace(sql, ?1, ?1 || ' CHECK (" + expression + ")')",
        "replace(sql, ?1, ?1 || ' COLLATE NOCASE')",
        "replace(sql, ?1, ?1 || ' DEFAULT (" + expression + ")')",
        "replace(sql, ' ', char(9))",
        "replace(sql, ' ', char(10))",
        "replace(sql, ' ', char(13))",
        "replace(sql, ' ', char(12))",
        "replace(sql, ' ', '  ')",
        "replace(sql, '(', ' (')",
        "upper(sql)",
        "lower(sql)",
        "sql || ' WITHOUT ROWID'",
        "sql || ';'",
        "replace(sql, ?1, ?1 || ' /* */')",
    };
    const std::string &rewrite = rewrites[pickIndex(program, std::size(rewrites))];
    executeScript(db, "PRAGMA writable_schema = ON");
    execute(db, "UPDATE sqlite_schema SET sql = " + rewrite + " WHERE type = 'table' AND name = ?2",
            {text(column), text(table.name)});
    executeScript(db, "PRAGMA writable_schema = OFF");
}

// Objects PeakLens never writes, made the ordinary way: indexes (on expressions, partial,
// covering the reader's queries), views, triggers, a table turned into a view, columns
// added, renamed or dropped.
void SqlMutator::addSchemaObject(sqlite3 *db, FuzzedDataProvider &program) const
{
    const Table &table = pickTable(program);
    const std::string name = quoted(table.name);
    const std::string column = quoted(table.columns[pickIndex(program, table.columns.size())]);
    std::string allColumns;
    for (const std::string &c : table.columns)
        allColumns += (allColumns.empty() ? "" : ", ") + quoted(c);
    const std::string expression(program.PickValueInArray(kExpressions));
    const std::string scripts[] = {
        "CREATE INDEX fuzz_index ON " + name + "(" + column + ")",
        "CREATE INDEX fuzz_index ON " + name + "(" + column + " * 2)",
        "CREATE INDEX fuzz_index ON " + name + "(" + column + ") WHERE " + column + " > 0",
        "CREATE INDEX fuzz_index ON " + name + "(" + allColumns + ")",
        "CREATE UNIQUE INDEX fuzz_index ON " + name + "(" + column + " DESC)",
        "CREATE VIEW fuzz_view AS SELECT " + expression + " AS x FROM " + name,
        "CREATE TRIGGER fuzz_trigger AFTER INSERT ON " + name + " BEGIN DELETE FROM " + name + "; END",
        "CREATE TABLE fuzz_table(a INTEGER, b AS (" + expression + "))",
        "ALTER TABLE " + name + " RENAME TO fuzz_old; CREATE VIEW " + name + " AS SELECT * FROM fuzz_old",
        "ALTER TABLE " + name + " RENAME TO fuzz_old; CREATE VIEW " + name + " AS SELECT " + allColumns + ", " + expression
            + " AS x FROM fuzz_old",
        "ALTER TABLE " + name + " ADD COLUMN fuzz_extra AS (" + expression + ")",
        "ALTER TABLE " + name + " RENAME COLUMN " + column + " TO fuzz_renamed",
        "ALTER TABLE " + name + " DROP COLUMN " + column,
        "DROP TABLE " + name,
    };
    executeScript(db, scripts[pickIndex(program, std::size(scripts))]);
}

// The same content laid out anew: another page size, auto-vacuum pointer maps.
void SqlMutator::repage(sqlite3 *db, FuzzedDataProvider &program) const
{
    static constexpr std::string_view kScripts[] = {
        "VACUUM",
        "PRAGMA page_size = 512; VACUUM",
        "PRAGMA page_size = 65536; VACUUM",
        "PRAGMA auto_vacuum = FULL; VACUUM",
        "PRAGMA auto_vacuum = INCREMENTAL; VACUUM; PRAGMA incremental_vacuum(4)",
        "PRAGMA secure_delete = ON; DELETE FROM ranges; DELETE FROM layers",
    };
    executeScript(db, std::string(program.PickValueInArray(kScripts)));
}

// The same database with its text stored as UTF-16, which PeakLens never writes: built
// anew, as SQLite cannot change the encoding of a database that has content.
sqlite3 *SqlMutator::reencodeAsUtf16(sqlite3 *db, FuzzedDataProvider &program) const
{
    sqlite3 *copy = nullptr;
    if (sqlite3_open(":memory:", &copy) != SQLITE_OK) {
        sqlite3_close(copy);
        return db;
    }
    executeScript(copy, program.ConsumeBool() ? "PRAGMA encoding = 'UTF-16le'" : "PRAGMA encoding = 'UTF-16be'");
    for (const char *pragma : {"user_version", "application_id"})
        executeScript(copy, std::string("PRAGMA ") + pragma + " = "
                                + std::to_string(static_cast<std::int32_t>(queryInteger(db, std::string("PRAGMA ") + pragma))));
    sqlite3_stmt *objects = nullptr;
    sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type = 'table' DESC, rowid", -1,
                       &objects, nullptr);
    while (sqlite3_step(objects) == SQLITE_ROW)
        executeScript(copy, reinterpret_cast<const char *>(sqlite3_column_text(objects, 0)));
    sqlite3_finalize(objects);
    executeScript(copy, "BEGIN");
    for (const Table &table : m_tables) {
        sqlite3_stmt *rows = nullptr, *insert = nullptr;
        std::string placeholders;
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            placeholders += c ? ", ?" : "?";
        sqlite3_prepare_v2(db, ("SELECT * FROM " + quoted(table.name)).c_str(), -1, &rows, nullptr);
        sqlite3_prepare_v2(copy, ("INSERT INTO " + quoted(table.name) + " VALUES(" + placeholders + ")").c_str(), -1, &insert,
                           nullptr);
        while (rows && insert && sqlite3_step(rows) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(rows); ++c)
                sqlite3_bind_value(insert, c + 1, sqlite3_column_value(rows, c));
            sqlite3_step(insert);
            sqlite3_reset(insert);
        }
        sqlite3_finalize(rows);
        sqlite3_finalize(insert);
    }
    executeScript(copy, "COMMIT");
    sqlite3_close(db);
    return copy;
}

} // namespace peaklens::fuzz
