// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes trace files damaged in one named way, for the tests of bad input (core and CLI).

#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/tracetext.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

namespace peaklens::test {

inline void writeBytes(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(bytes);
}

// A trace read from `bytes` written to a file named `name`, or the error reading it gave.
struct LoadedTrace
{
    std::shared_ptr<const Trace> trace;
    QString problem;
};

inline LoadedTrace loadFromBytes(const QByteArray &bytes, const QString &name)
{
    QTemporaryDir dir;
    const QString path = dir.filePath(name);
    writeBytes(path, bytes);
    try {
        return {loadTrace(path.toStdString()), {}};
    } catch (const std::exception &error) {
        return {nullptr, QString::fromStdString(error.what())};
    }
}

inline void execSql(const QString &path, const char *sql)
{
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(qPrintable(path), &db), SQLITE_OK);
    char *error = nullptr;
    const int code = sqlite3_exec(db, sql, nullptr, nullptr, &error);
    const QString message = error ? QString::fromUtf8(error) : QString();
    sqlite3_free(error);
    sqlite3_close(db);
    QVERIFY2(code == SQLITE_OK, qPrintable(message));
}

// damage: missing, directory, empty, random, prose, header, half, foreign, newer, droptable,
// nolayers, shortcolumn, category, codec, notzstd, stackorder, stackcycle, scribble, badtext,
// generated, view, trigger, exprindex, redefined, chunknegative, chunkgap, emptytotals; v1shortcolumn and v1category damage the
// format-1 fixture instead. Anything else leaves the good trace, written from `traceText`.
inline void writeDamagedTrace(const QString &path, const QString &damage, const char *traceText)
{
    const auto is = [&](const char *name) { return damage == QLatin1String(name); };
    if (is("missing"))
        return;
    if (is("directory")) {
        QVERIFY(QDir().mkpath(path));
        return;
    }
    TraceWriter::writeTrace(*parseTraceText(traceText), path.toStdString());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray good = file.readAll();
    file.close();

    if (is("empty")) {
        writeBytes(path, {});
    } else if (is("random")) {
        QByteArray bytes(65536, '\0');
        QRandomGenerator generator(42);
        for (auto &byte : bytes)
            byte = static_cast<char>(generator.bounded(256));
        writeBytes(path, bytes);
    } else if (is("prose")) {
        writeBytes(path, "Dear diary, today the GPU ran out of memory.\n");
    } else if (is("header")) {
        writeBytes(path, good.left(50));
    } else if (is("half")) {
        writeBytes(path, good.left(good.size() / 2));
    } else if (is("foreign")) {
        QFile::remove(path);
        execSql(path, "CREATE TABLE accounts(id INTEGER, name TEXT)");
    } else if (is("newer")) {
        execSql(path, "PRAGMA user_version = 99");
    } else if (is("droptable")) {
        execSql(path, "DROP TABLE ranges");
    } else if (is("nolayers")) {
        execSql(path, "DELETE FROM layers");
    } else if (is("shortcolumn")) {
        execSql(path, "UPDATE events SET plain_bytes = plain_bytes + 1");
    } else if (is("category")) {
        // The chunk is small enough to be stored plain: its last column is the tag bytes.
        execSql(path, "UPDATE events SET columns = CAST(substr(columns, 1, length(columns) - count) || x'09' "
                      "|| substr(columns, length(columns) - count + 2) AS BLOB) WHERE codec = 0");
    } else if (is("codec")) {
        execSql(path, "UPDATE events SET codec = 7");
    } else if (is("notzstd")) {
        execSql(path, "UPDATE events SET codec = 1");
    } else if (is("v1shortcolumn") || is("v1category")) {
        QFile::remove(path);
        QVERIFY(QFile::copy(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/format/training-step.v1.peaklens"), path));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        if (is("v1shortcolumn"))
            execSql(path, "UPDATE events SET lane = x'00'");
        else
            execSql(path, "UPDATE events SET category = CAST(x'09' || substr(category, 2) AS BLOB)");
    } else if (is("stackorder")) {
        execSql(path, "UPDATE stacks SET id = id + 5");
    } else if (is("stackcycle")) {
        execSql(path, "UPDATE stacks SET parent = id");
    } else if (is("scribble")) {
        QByteArray bytes = good;
        // Keep the 100-byte header, overwrite the schema page and what follows.
        for (qsizetype i = 100; i < bytes.size(); i += 7)
            bytes[i] = static_cast<char>(0xA5);
        writeBytes(path, bytes);
    } else if (is("generated")) {
        // Computing this column on every read would build gigabytes.
        execSql(path, "ALTER TABLE steps ADD COLUMN pad BLOB GENERATED ALWAYS AS (zeroblob(1000000000)) VIRTUAL");
    } else if (is("view")) {
        execSql(path, "CREATE VIEW everything AS SELECT * FROM events, events, events");
    } else if (is("trigger")) {
        execSql(path, "CREATE TRIGGER wipe AFTER INSERT ON steps BEGIN DELETE FROM events; END");
    } else if (is("exprindex")) {
        execSql(path, "CREATE INDEX slow ON steps(number * t_begin_ns)");
    } else if (is("redefined")) {
        execSql(path, "DROP TABLE markers; CREATE TABLE markers(t_ns INTEGER NOT NULL, lane INTEGER NOT NULL, "
                      "kind TEXT NOT NULL, bytes INTEGER NOT NULL CHECK(bytes > 0))");
    } else if (is("chunknegative")) {
        // Renumbered below 0: a reader that took chunks from 0 up would skip its events.
        execSql(path, "UPDATE events SET chunk = -5");
    } else if (is("chunkgap")) {
        execSql(path, "UPDATE events SET chunk = chunk + 3");
    } else if (is("emptytotals")) {
        execSql(path, "UPDATE events SET totals = x''");
    } else if (is("badtext")) {
        writeBytes(path, "alloc a 5\nfree b\n");
    }
}

} // namespace peaklens::test
