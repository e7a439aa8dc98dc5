// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/format/schema.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracefollower.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>

using namespace peaklens;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

// Polls until the follower has nothing more to find, checking what each update says.
struct Followed
{
    int updatesWithEvents = 0;
    int polls = 0;
    QString problem;
};

Followed followToTheEnd(TraceFollower &follower, int timeoutMs = 60000)
{
    Followed result;
    QElapsedTimer clock;
    clock.start();
    while (follower.isLive()) {
        if (clock.elapsed() > timeoutMs) {
            result.problem = QStringLiteral("still live after %1 ms").arg(timeoutMs);
            return result;
        }
        const std::size_t before = follower.trace().events.size();
        const TraceFollower::Update update = follower.poll();
        ++result.polls;
        const Trace &trace = follower.trace();
        if (update.newEvents != trace.events.size() - before)
            result.problem = QStringLiteral("the update counts %1 new events, the trace grew by %2")
                                 .arg(update.newEvents)
                                 .arg(trace.events.size() - before);
        if (!update.reordered && update.eventsFrom != before)
            result.problem = QStringLiteral("new events said to start at %1, not %2").arg(update.eventsFrom).arg(before);
        if (!trace.events.isSortedByTime())
            result.problem = QStringLiteral("the events are out of time order after a poll");
        if (update.newEvents > 0)
            ++result.updatesWithEvents;
        QThread::msleep(5);
    }
    return result;
}

} // namespace

class tst_TraceFollower : public QObject
{
    Q_OBJECT

private slots:
    void followsAWriterToTheEnd_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<int>("commitEvery");
        QTest::newRow("replayed training steps") << kSample << 200;
        QTest::newRow("replayed, a commit every 10 events") << kSample << 10;
        QTest::newRow("real Kineto trace, V100")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_v100_rank1.pt.trace.json.gz") << 500;
        QTest::newRow("real snapshot, training")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz") << 300;
    }

    // What a follower saw while the file was written equals the finished file, read whole.
    void followsAWriterToTheEnd()
    {
        QFETCH(QString, input);
        QFETCH(int, commitEvery);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {input, out, QStringLiteral("--commit-every"), QString::number(commitEvery),
                                               QStringLiteral("--pause-ms"), QStringLiteral("2")}));
        TraceFollower follower(out.toStdString());
        const Followed followed = followToTheEnd(follower);
        QVERIFY(writer.waitForFinished(60000));
        QVERIFY2(followed.problem.isEmpty(), qPrintable(followed.problem));
        QVERIFY2(writer.exitCode() == 0, writer.readAllStandardError().constData());
        QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
        const auto whole = TraceReader::read(out.toStdString());
        QCOMPARE(follower.trace().events.size(), whole->events.size());
        QVERIFY(follower.trace() == *whole);
        // It followed: the events came over more than one poll.
        QVERIFY2(followed.updatesWithEvents >= 2, qPrintable(QString::number(followed.updatesWithEvents)));
        QVERIFY(!follower.poll().changedAnything());
    }

    void writerKilledMidRun()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("killed.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {kSample, out, QStringLiteral("--commit-every"), QStringLiteral("300"),
                                               QStringLiteral("--pause-ms"), QStringLiteral("5"), QStringLiteral("--die-after"),
                                               QStringLiteral("4")}));
        TraceFollower follower(out.toStdString());
        const Followed followed = followToTheEnd(follower);
        QVERIFY(writer.waitForFinished(60000));
        QVERIFY2(followed.problem.isEmpty(), qPrintable(followed.problem));
        QCOMPARE(writer.exitCode(), 9);
        QCOMPARE(follower.writer(), TraceFollower::Writer::Stopped);
        QVERIFY(QString::fromStdString(follower.writerText()).contains(QStringLiteral("stopped without finishing")));
        // Everything committed, as a plain read of the file (through its log) finds it.
        const auto whole = TraceReader::read(out.toStdString());
        QCOMPARE(follower.trace().events.size(), std::size_t(4 * 300));
        QVERIFY(follower.trace() == *whole);
    }

    void fileWrittenWholeIsReadOnce()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("whole.peaklens"));
        const auto sample = loadTrace(kSample.toStdString());
        TraceWriter::writeTrace(*sample, out.toStdString());
        TraceFollower follower(out.toStdString());
        const auto update = follower.poll();
        QCOMPARE(update.newEvents, sample->events.size());
        QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
        QVERIFY(!follower.isLive());
        QVERIFY(follower.trace() == *TraceReader::read(out.toStdString()));
    }

    // Times far apart are damage even when each poll's own rows lie close together.
    void timesTooFarApartAcrossCommitsAreDamage()
    {
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("far.peaklens")).toStdString();
        TraceWriter writer(out);
        writer.writeLane(0, Lane{});
        writer.writeEvent(MemoryEvent{0, 64, 1});
        writer.commit();
        TraceFollower follower(out);
        QCOMPARE(follower.poll().newEvents, std::size_t(1));
        writer.writeStep(Step{1, std::int64_t(1) << 54, (std::int64_t(1) << 54) + 10});
        writer.commit();
        try {
            follower.poll();
            QFAIL("no error");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromUtf8(error.what()).contains(QStringLiteral("more than 104 days apart")), error.what());
        }
    }

    // The file at the path stops being the one followed: another moved over it, or it was
    // cut short. Each is an error naming the file; nothing of the other file is merged.
    void aReplacedOrTruncatedFileIsAnError_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("problem");
        QTest::newRow("another file moved over it") << QStringLiteral("moved") << QStringLiteral("was replaced by another file");
        QTest::newRow("truncated") << QStringLiteral("truncated") << QStringLiteral("shrank from");
    }
    void aReplacedOrTruncatedFileIsAnError()
    {
        QFETCH(QString, change);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        TraceWriter writer(out.toStdString());
        writer.writeLane(0, Lane{});
        for (int i = 0; i < 2000; ++i)
            writer.writeEvent(MemoryEvent{i, 64, std::uint64_t(i + 1)});
        writer.commit();
        TraceFollower follower(out.toStdString());
        QCOMPARE(follower.poll().newEvents, std::size_t(2000));
        if (change == QLatin1String("moved")) {
            const QString other = dir.filePath(QStringLiteral("other.peaklens"));
            QVERIFY(QFile::copy(QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens"), other));
            QCOMPARE(std::rename(qPrintable(other), qPrintable(out)), 0); // atomically, as mv does
        } else {
            QVERIFY(QFile::resize(out, 4096));
        }
        try {
            follower.poll();
            QFAIL("no error");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromUtf8(error.what()).startsWith(out + QStringLiteral(": ")), error.what());
            QVERIFY2(QString::fromUtf8(error.what()).contains(problem), error.what());
        }
        QCOMPARE(follower.trace().events.size(), std::size_t(2000));
    }

    void emptyFileWaitsForItsWriter()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("new.peaklens"));
        QFile file(out);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        TraceFollower follower(out.toStdString());
        QVERIFY(!follower.poll().changedAnything());
        QCOMPARE(follower.writer(), TraceFollower::Writer::Waiting);
        QVERIFY(follower.isLive());
    }

    // A writer that has set its identity but committed no table yet: the follower waits,
    // and a plain open says the file holds nothing yet rather than calling it damaged.
    void fileWithoutTablesSaysItsWriterHasNotCommitted()
    {
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("begun.peaklens")).toStdString();
        SqliteDatabase begun(out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        begun.exec("PRAGMA journal_mode = WAL");
        begun.exec("PRAGMA application_id = " + std::to_string(schema::kApplicationId));
        TraceFollower follower(out);
        QVERIFY(!follower.poll().changedAnything());
        QCOMPARE(follower.writer(), TraceFollower::Writer::Waiting);
        try {
            TraceReader::read(out);
            QFAIL("no error");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromUtf8(error.what()).contains(QStringLiteral("holds nothing yet: its writer has not committed")),
                     error.what());
            QVERIFY(QString::fromUtf8(error.what()).contains(QString::fromStdString(out)));
        }
    }

    void somethingElseIsAnError_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expected");
        QTest::newRow("text") << QByteArray(200, 'x') << QStringLiteral("not a PeakLens trace");
        QTest::newRow("another SQLite file") << QByteArray() << QStringLiteral("not a PeakLens trace");
    }

    void somethingElseIsAnError()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("other.peaklens"));
        if (content.isEmpty()) {
            QProcess sqlite;
            sqlite.start(QStringLiteral("sqlite3"), {out, QStringLiteral("CREATE TABLE t(x); INSERT INTO t VALUES(1);")});
            if (!sqlite.waitForFinished() || sqlite.exitCode() != 0)
                QSKIP("the sqlite3 shell is not installed");
        } else {
            QFile file(out);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(content);
        }
        TraceFollower follower(out.toStdString());
        try {
            follower.poll();
            QFAIL("no error");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromUtf8(error.what()).contains(expected), error.what());
            QVERIFY(QString::fromUtf8(error.what()).contains(out));
        }
    }
};

QTEST_GUILESS_MAIN(tst_TraceFollower)
#include "tst_tracefollower.moc"
