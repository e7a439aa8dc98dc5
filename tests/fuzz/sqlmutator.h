// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fuzz input read as a short program of edits to a native trace, made through SQLite
// itself: every result is a well-formed database, so the reader is tested on what its
// tables and schema say rather than on SQLite's own checks of damaged pages.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

class FuzzedDataProvider;
struct sqlite3;

namespace peaklens::fuzz {

class SqlMutator
{
public:
    // `seed`: the bytes of a native trace file, where every program starts.
    explicit SqlMutator(std::vector<unsigned char> seed);

    // The seed changed by the program in `input`, as the bytes of a database file.
    std::vector<unsigned char> run(const std::uint8_t *input, std::size_t size) const;

private:
    struct Table
    {
        std::string name;
        std::vector<std::string> columns;
        std::vector<std::string> types; // as declared: "INTEGER", "TEXT", ...
    };

    void setCell(sqlite3 *db, FuzzedDataProvider &program) const;
    void deleteRows(sqlite3 *db, FuzzedDataProvider &program) const;
    void copyRow(sqlite3 *db, FuzzedDataProvider &program) const;
    void insertRow(sqlite3 *db, FuzzedDataProvider &program) const;
    void resizeChunk(sqlite3 *db, FuzzedDataProvider &program) const;
    void setPragma(sqlite3 *db, FuzzedDataProvider &program) const;
    void editSchemaEntry(sqlite3 *db, FuzzedDataProvider &program) const;
    void rewriteTableSql(sqlite3 *db, FuzzedDataProvider &program) const;
    void addSchemaObject(sqlite3 *db, FuzzedDataProvider &program) const;
    void repage(sqlite3 *db, FuzzedDataProvider &program) const;
    sqlite3 *reencodeAsUtf16(sqlite3 *db, FuzzedDataProvider &program) const;

    const Table &pickTable(FuzzedDataProvider &program) const;

    std::vector<unsigned char> m_seed;
    std::vector<Table> m_tables; // as schema::kCreateTables defines them
};

} // namespace peaklens::fuzz
