// SPDX-License-Identifier: Apache-2.0
#pragma once
// Thin RAII wrappers over the SQLite C API for the native trace file. Every failure
// throws peaklens::Error with SQLite's own message, for the reader and writer to reword.

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace peaklens {

class SqliteStatement
{
public:
    SqliteStatement(sqlite3 *db, std::string_view sql);
    ~SqliteStatement();
    SqliteStatement(const SqliteStatement &) = delete;
    SqliteStatement &operator=(const SqliteStatement &) = delete;

    SqliteStatement &bind(int index, std::int64_t value);
    SqliteStatement &bind(int index, std::string_view text);
    SqliteStatement &bind(int index, std::span<const std::byte> blob);
    SqliteStatement &bindReal(int index, double value);
    SqliteStatement &bindNull(int index);

    // True while there is a row; throws on errors.
    bool step();
    // step() then reset(), for statements that return no rows.
    void run();
    void reset();

    bool isNull(int column) const { return sqlite3_column_type(m_statement, column) == SQLITE_NULL; }
    // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
    int type(int column) const { return sqlite3_column_type(m_statement, column); }
    int columns() const { return sqlite3_column_count(m_statement); }
    std::int64_t integer(int column) const { return sqlite3_column_int64(m_statement, column); }
    double real(int column) const { return sqlite3_column_double(m_statement, column); }
    std::string text(int column) const;
    std::span<const std::byte> blob(int column) const;

private:
    sqlite3 *m_db;
    sqlite3_stmt *m_statement = nullptr;
};

class SqliteDatabase
{
public:
    SqliteDatabase(const std::string &path, int openFlags);
    // A read-only database over a whole file's bytes in memory, which must outlive it.
    static std::unique_ptr<SqliteDatabase> fromImage(std::span<const char> image);
    // A file no one writes while it is open: SQLite takes no locks and creates nothing
    // beside it (no -wal, -shm or -journal). A file still arriving (ArrivingFile) is read
    // as it arrives.
    static std::unique_ptr<SqliteDatabase> openImmutable(const std::string &path);
    ~SqliteDatabase();
    SqliteDatabase(const SqliteDatabase &) = delete;
    SqliteDatabase &operator=(const SqliteDatabase &) = delete;

    void exec(std::string_view sql);
    std::int64_t queryInteger(std::string_view sql);
    SqliteStatement prepare(std::string_view sql) { return SqliteStatement(m_db, sql); }
    bool hasTable(std::string_view name);
    void close();

    // For a file someone else made: no writes, no triggers or views, no schema functions
    // with side effects, and tight limits on what a statement may build. Call before the
    // first statement.
    void restrictToReading();

    // SQLite asks `stop` every few thousand steps of a running statement; once it answers
    // true, the statement fails ("interrupted") and throws, so a long query ends promptly
    // when its caller gives up. `stop` is called from inside SQLite and must not throw.
    void interruptWhen(std::function<bool()> stop);

    sqlite3 *handle() const { return m_db; }

private:
    sqlite3 *m_db = nullptr;
    std::function<bool()> m_stop;
};

} // namespace peaklens
