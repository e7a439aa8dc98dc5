// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small helpers shared by the Qt Test suites: std::string <-> QString, and traces from text.

#include "core/trace/tracetext.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <string>

namespace peaklens::test {

inline QString qs(const std::string &text)
{
    return QString::fromStdString(text);
}

inline std::string ss(const QString &text)
{
    return text.toStdString();
}

inline std::shared_ptr<const Trace> traceFrom(const QString &text)
{
    return parseTraceText(ss(text));
}

// One training step as trace text: a forward `forward` ns long allocating `bytes` halfway
// through, a backward `backward` ns long freeing them halfway through; the step (number 1)
// begins at `begin`.
inline QString stepText(int begin, int forward, int backward, int bytes = 100)
{
    const int fwdEnd = begin + 1 + forward, bwdEnd = fwdEnd + backward;
    return QStringLiteral("t=%1 begin step 1\nt=%2 begin fwd:l\nt=%3 alloc a %8\nt=%4 end fwd:l\nt=%4 begin bwd:l\n"
                          "t=%5 free a\nt=%6 end bwd:l\nt=%7 end step 1\n")
        .arg(begin)
        .arg(begin + 1)
        .arg(begin + 1 + forward / 2)
        .arg(fwdEnd)
        .arg(fwdEnd + backward / 2)
        .arg(bwdEnd)
        .arg(bwdEnd + 1)
        .arg(bytes);
}

// What one of the project's programs (in build/bin) printed and returned.
struct ToolRun
{
    int exitCode = -1; // -1: did not finish within the time or crashed
    QByteArray out;
    QByteArray err;
};

inline ToolRun runTool(const QString &program, const QStringList &arguments, int timeoutMs = 120000)
{
    QProcess process;
    process.start(QStringLiteral(PEAKLENS_BIN_DIR "/") + program, arguments);
    ToolRun run;
    if (!process.waitForFinished(timeoutMs) || process.exitStatus() != QProcess::NormalExit)
        return run;
    run.exitCode = process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

// Starts one of the project's streaming writers (it prints "committed N" after each
// commit), waits for `commits` commits and kills it with SIGKILL: no destructor, no final
// flush. Returns the last N reported, or a sentence saying what went wrong.
struct KilledWriter
{
    quint64 committed = 0;
    QString problem; // empty when it was killed as planned
};

inline KilledWriter killAfterCommits(const QString &program, const QStringList &arguments, int commits = 2)
{
    KilledWriter result;
    QProcess writer;
    writer.start(QStringLiteral(PEAKLENS_BIN_DIR "/") + program, arguments);
    if (!writer.waitForStarted())
        return {0, program + QStringLiteral(" did not start")};
    for (int seen = 0; seen < commits;) {
        if (!writer.waitForReadyRead(10000)) {
            writer.kill();
            writer.waitForFinished();
            return {0, program + QStringLiteral(" reported no commit within 10 s")};
        }
        while (writer.canReadLine()) {
            const QByteArray line = writer.readLine().trimmed();
            if (!line.startsWith("committed "))
                return {0, QStringLiteral("unexpected output: ") + QString::fromUtf8(line)};
            result.committed = line.mid(10).toULongLong();
            ++seen;
        }
    }
    writer.kill();
    writer.waitForFinished();
    if (writer.exitStatus() != QProcess::CrashExit)
        result.problem = program + QStringLiteral(" was not killed");
    return result;
}

// Starts peaklens-test-livewriter (tests/core/format/livewriter.cpp) with `arguments`
// (IN OUT [options]): it writes IN again into OUT the way a collector writes a run. True
// once OUT exists, so a reader can begin following it.
inline bool startLiveWriter(QProcess &writer, const QStringList &arguments)
{
    writer.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-test-livewriter"), arguments);
    for (int i = 0; i < 2000 && !QFile::exists(arguments.value(1)); ++i)
        QThread::msleep(5);
    return QFile::exists(arguments.value(1));
}

// Writes trace text of `pairs` allocations of varied sizes, each block freed three
// allocations later: a file of another format than the native one, as long as asked.
inline bool writeAllocationsText(const QString &path, std::size_t pairs)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    for (std::size_t i = 0; i < pairs; ++i) {
        file.write(QStringLiteral("alloc b%1 %2\n").arg(i).arg(64 + (i * 7919) % 100000).toLatin1());
        if (i >= 3)
            file.write(QStringLiteral("free b%1\n").arg(i - 3).toLatin1());
    }
    return file.error() == QFile::NoError;
}

// PeakLens's cache for one test: a folder of its own as PEAKLENS_CACHE_DIR, and `limit`,
// when given, as PEAKLENS_CACHE_LIMIT; both unset again, the folder gone, when it goes.
class ScopedCache
{
public:
    explicit ScopedCache(const QByteArray &limit = {})
    {
        qputenv("PEAKLENS_CACHE_DIR", m_folder.path().toUtf8());
        if (!limit.isNull())
            qputenv("PEAKLENS_CACHE_LIMIT", limit);
    }
    ~ScopedCache()
    {
        qunsetenv("PEAKLENS_CACHE_DIR");
        qunsetenv("PEAKLENS_CACHE_LIMIT");
    }
    ScopedCache(const ScopedCache &) = delete;
    ScopedCache &operator=(const ScopedCache &) = delete;
    QString path() const { return m_folder.path(); }
    QString filePath(const QString &name) const { return m_folder.filePath(name); }

private:
    QTemporaryDir m_folder;
};

// A file of `bytes` bytes at `path`, its folders made, last written `hoursAgo` hours ago:
// a cached copy last used then.
inline bool placeFileUsed(const QString &path, qint64 bytes, int hoursAgo)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(QByteArray(bytes, 'x')) == bytes
           && file.flush() // the time is set after the last write
           && file.setFileTime(QDateTime::currentDateTime().addSecs(-3600LL * hoursAgo), QFileDevice::FileModificationTime);
}

} // namespace peaklens::test
