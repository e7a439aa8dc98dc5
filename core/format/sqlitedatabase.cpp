// SPDX-License-Identifier: Apache-2.0
#include "sqlitedatabase.h"

#include "arrivingfile.h"

#include "core/error.h"

namespace peaklens {

namespace {
[[noreturn]] void throwSqlite(sqlite3 *db, int code)
{
    throw Error(db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
}

// An SQLite URI names a file with %-escapes for every byte that is not plainly safe.
std::string fileUri(const std::string &path)
{
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string uri = "file:";
    for (const unsigned char c : path) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '-'
                           || c == '.' || c == '_' || c == '~';
        if (plain) {
            uri += static_cast<char>(c);
        } else {
            uri += '%';
            uri += kHex[c >> 4];
            uri += kHex[c & 15];
        }
    }
    return uri;
}
} // namespace

SqliteStatement::SqliteStatement(sqlite3 *db, std::string_view sql)
    : m_db(db)
{
    const int code = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &m_statement, nullptr);
    if (code != SQLITE_OK)
        throwSqlite(db, code);
}

SqliteStatement::~SqliteStatement()
{
    sqlite3_finalize(m_statement);
}

SqliteStatement &SqliteStatement::bind(int index, std::int64_t value)
{
    if (int code = sqlite3_bind_int64(m_statement, index, value); code != SQLITE_OK)
        throwSqlite(m_db, code);
    return *this;
}

SqliteStatement &SqliteStatement::bind(int index, std::string_view text)
{
    if (int code = sqlite3_bind_text64(m_statement, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        code != SQLITE_OK)
        throwSqlite(m_db, code);
    return *this;
}

SqliteStatement &SqliteStatement::bind(int index, std::span<const std::byte> blob)
{
    // SQLITE_STATIC: callers keep the bytes alive until the statement has run.
    if (int code = sqlite3_bind_blob64(m_statement, index, blob.data(), blob.size(), SQLITE_STATIC); code != SQLITE_OK)
        throwSqlite(m_db, code);
    return *this;
}

SqliteStatement &SqliteStatement::bindReal(int index, double value)
{
    if (int code = sqlite3_bind_double(m_statement, index, value); code != SQLITE_OK)
        throwSqlite(m_db, code);
    return *this;
}

SqliteStatement &SqliteStatement::bindNull(int index)
{
    if (int code = sqlite3_bind_null(m_statement, index); code != SQLITE_OK)
        throwSqlite(m_db, code);
    return *this;
}

bool SqliteStatement::step()
{
    const int code = sqlite3_step(m_statement);
    if (code == SQLITE_ROW)
        return true;
    if (code == SQLITE_DONE)
        return false;
    throwSqlite(m_db, code);
}

void SqliteStatement::run()
{
    step();
    reset();
}

void SqliteStatement::reset()
{
    sqlite3_reset(m_statement);
    sqlite3_clear_bindings(m_statement);
}

std::string SqliteStatement::text(int column) const
{
    const auto *data = reinterpret_cast<const char *>(sqlite3_column_text(m_statement, column));
    return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(m_statement, column))) : std::string();
}

std::span<const std::byte> SqliteStatement::blob(int column) const
{
    const auto *data = static_cast<const std::byte *>(sqlite3_column_blob(m_statement, column));
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(m_statement, column));
    return data ? std::span(data, size) : std::span<const std::byte>();
}

SqliteDatabase::SqliteDatabase(const std::string &path, int openFlags)
{
    const int code = sqlite3_open_v2(path.c_str(), &m_db, openFlags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (code != SQLITE_OK) {
        const std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(code);
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Error(message);
    }
    sqlite3_extended_result_codes(m_db, 1);
}

std::unique_ptr<SqliteDatabase> SqliteDatabase::fromImage(std::span<const char> image)
{
    auto db = std::make_unique<SqliteDatabase>(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    // SQLITE_DESERIALIZE_READONLY: SQLite reads the bytes and never writes them.
    auto *bytes = reinterpret_cast<unsigned char *>(const_cast<char *>(image.data()));
    const auto size = static_cast<sqlite3_int64>(image.size());
    if (int code = sqlite3_deserialize(db->m_db, "main", bytes, size, size, SQLITE_DESERIALIZE_READONLY); code != SQLITE_OK)
        throwSqlite(db->m_db, code);
    return db;
}

std::unique_ptr<SqliteDatabase> SqliteDatabase::openImmutable(const std::string &path)
{
    std::string uri = fileUri(path) + "?immutable=1";
    // A copy still arriving from another machine: each read waits for its pages.
    if (const auto arriving = ArrivingFile::find(path); arriving && ArrivingFile::vfsName())
        uri += std::string("&vfs=") + ArrivingFile::vfsName() + "&arrival=" + std::to_string(arriving->id());
    return std::make_unique<SqliteDatabase>(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

void SqliteDatabase::restrictToReading()
{
    for (const int option : {SQLITE_DBCONFIG_DEFENSIVE, SQLITE_DBCONFIG_DQS_DDL, SQLITE_DBCONFIG_DQS_DML,
                             SQLITE_DBCONFIG_ENABLE_TRIGGER, SQLITE_DBCONFIG_ENABLE_VIEW, SQLITE_DBCONFIG_TRUSTED_SCHEMA,
                             SQLITE_DBCONFIG_ENABLE_FKEY, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION}) {
        const int on = option == SQLITE_DBCONFIG_DEFENSIVE ? 1 : 0;
        if (int code = sqlite3_db_config(m_db, option, on, nullptr); code != SQLITE_OK)
            throwSqlite(m_db, code);
    }
    // Our own statements need little; a value may be large (an events chunk is 512 KiB a column).
    sqlite3_limit(m_db, SQLITE_LIMIT_LENGTH, 256 << 20);
    sqlite3_limit(m_db, SQLITE_LIMIT_SQL_LENGTH, 64 << 10);
    sqlite3_limit(m_db, SQLITE_LIMIT_COLUMN, 64);
    sqlite3_limit(m_db, SQLITE_LIMIT_EXPR_DEPTH, 32);
    sqlite3_limit(m_db, SQLITE_LIMIT_COMPOUND_SELECT, 2);
    sqlite3_limit(m_db, SQLITE_LIMIT_VDBE_OP, 10000);
    sqlite3_limit(m_db, SQLITE_LIMIT_FUNCTION_ARG, 8);
    sqlite3_limit(m_db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(m_db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 64);
    sqlite3_limit(m_db, SQLITE_LIMIT_VARIABLE_NUMBER, 16);
    sqlite3_limit(m_db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
    exec("PRAGMA query_only = ON; PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0");
}

void SqliteDatabase::interruptWhen(std::function<bool()> stop)
{
    m_stop = std::move(stop);
    // Every 10,000 virtual-machine steps: well under a millisecond of work between answers.
    sqlite3_progress_handler(
        m_db, m_stop ? 10000 : 0, [](void *database) { return static_cast<SqliteDatabase *>(database)->m_stop() ? 1 : 0; }, this);
}

SqliteDatabase::~SqliteDatabase()
{
    sqlite3_close_v2(m_db);
}

void SqliteDatabase::exec(std::string_view sql)
{
    char *message = nullptr;
    const int code = sqlite3_exec(m_db, std::string(sql).c_str(), nullptr, nullptr, &message);
    if (code != SQLITE_OK) {
        const std::string text = message ? message : sqlite3_errstr(code);
        sqlite3_free(message);
        throw Error(text);
    }
}

std::int64_t SqliteDatabase::queryInteger(std::string_view sql)
{
    SqliteStatement statement(m_db, sql);
    return statement.step() ? statement.integer(0) : 0;
}

bool SqliteDatabase::hasTable(std::string_view name)
{
    SqliteStatement statement(m_db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    statement.bind(1, name);
    return statement.step();
}

void SqliteDatabase::close()
{
    if (!m_db)
        return;
    const int code = sqlite3_close(m_db);
    if (code != SQLITE_OK)
        throwSqlite(m_db, code);
    m_db = nullptr;
}

} // namespace peaklens
