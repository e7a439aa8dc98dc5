// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/format/tracefollower.h"
#include "core/format/tracemirror.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/trace/metadata.h"
#include "testsupport.h"

#include <QFile>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>
#include <unistd.h>

using namespace peaklens;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

// The trace without the keys that name who wrote this copy.
Trace withoutWriters(Trace trace)
{
    for (const std::string_view key : {metakey::WriterProcess, metakey::WriterSource})
        trace.meta.erase(std::string(key));
    return trace;
}

QByteArray bytesOf(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The sample's event `i`, of no layer and no stack: one a file of a lane alone may hold.
MemoryEvent plainEvent(const Trace &sample, std::size_t i)
{
    MemoryEvent event = sample.events.at(i);
    event.layer = kNoLayer;
    event.stack = 0;
    return event;
}

} // namespace

class tst_TraceMirror : public QObject
{
    Q_OBJECT

private slots:
    // A copy made delta by delta while the original is written, followed as it grows, holds
    // what the original holds; replaced by the finished original, the follower reads on.
    void aCopyFollowedWhileTheOriginalIsWrittenEqualsIt_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<int>("commitEvery");
        QTest::newRow("replayed training steps") << kSample << 300;
        QTest::newRow("real snapshot, training")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz") << 2000;
    }

    void aCopyFollowedWhileTheOriginalIsWrittenEqualsIt()
    {
        QFETCH(QString, input);
        QFETCH(int, commitEvery);
        QTemporaryDir dir;
        const QString original = dir.filePath(QStringLiteral("original.peaklens"));
        const QString copy = dir.filePath(QStringLiteral("copy.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {input, original, QStringLiteral("--commit-every"), QString::number(commitEvery),
                                               QStringLiteral("--pause-ms"), QStringLiteral("3")}));
        MirrorSource source(original.toStdString());
        MirrorSink sink(copy.toStdString(), "host:" + original.toStdString());
        TraceFollower follower(copy.toStdString());
        int deltas = 0;
        bool writing = true;
        while (writing) {
            writing = writer.state() != QProcess::NotRunning;
            const std::string delta = source.readDelta();
            if (!delta.empty()) {
                sink.apply(delta);
                ++deltas;
            }
            follower.poll();
            if (deltas > 0)
                QVERIFY(follower.writer() != TraceFollower::Writer::Stopped);
            QThread::msleep(writing ? 5 : 0);
            writer.waitForFinished(0);
        }
        QVERIFY2(writer.exitCode() == 0, writer.readAllStandardError().constData());
        sink.apply(source.readDelta());
        QVERIFY(source.readDelta().empty()); // nothing new: nothing sent
        QVERIFY2(deltas >= 2, qPrintable(QString::number(deltas)));
        follower.poll();
        QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
        const auto whole = TraceReader::read(original.toStdString());
        QCOMPARE(follower.trace().events.size(), whole->events.size());
        QVERIFY(withoutWriters(follower.trace()) == withoutWriters(*whole));
        // The copy names this process as its writer and the original's beside it.
        const auto copied = TraceReader::read(copy.toStdString());
        QCOMPARE(copied->metaValue(metakey::WriterSource), whole->metaValue(metakey::WriterProcess));
        QVERIFY(QString::fromStdString(copied->metaValue(metakey::WriterProcess))
                    .endsWith(QLatin1Char(' ') + QString::number(QCoreApplication::applicationPid())));
        QVERIFY(withoutWriters(*copied) == withoutWriters(*whole));
    }

    // The receiving end puts the finished original in the copy's place, where a follower
    // may still look: it reads on, and from then on the file's writer is the original's.
    void aCopyReplacedByItsFinishedOriginalIsFollowedOn()
    {
        QTemporaryDir dir;
        const QString original = dir.filePath(QStringLiteral("original.peaklens"));
        const QString copy = dir.filePath(QStringLiteral("copy.peaklens"));
        const auto sample = TraceReader::read(kSample.toStdString());
        {
            TraceWriter writer(original.toStdString());
            writer.writeMeta("description", "one event");
            writer.writeLane(0, sample->lanes.at(0));
            writer.writeEvent(plainEvent(*sample, 0));
            writer.commit();
            MirrorSource source(original.toStdString());
            MirrorSink sink(copy.toStdString(), "host:original");
            sink.apply(source.readDelta());
            TraceFollower follower(copy.toStdString());
            follower.poll();
            QCOMPARE(follower.writer(), TraceFollower::Writer::Writing);
            QCOMPARE(follower.trace().events.size(), std::size_t(1));
            writer.writeEvent(plainEvent(*sample, 1));
            writer.finish();
            sink.close();
            QVERIFY(QFile::copy(original, dir.filePath(QStringLiteral("finished"))));
            QCOMPARE(std::rename(qPrintable(dir.filePath(QStringLiteral("finished"))), qPrintable(copy)), 0);
            follower.poll();
            QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
            QCOMPARE(follower.trace().events.size(), std::size_t(2));
            QCOMPARE(follower.trace().metaValue(metakey::WriterProcess),
                     TraceReader::read(original.toStdString())->metaValue(metakey::WriterProcess));
        }
        // Another file in its place is still an error: its writer is not the original's.
        const QString other = dir.filePath(QStringLiteral("other.peaklens"));
        TraceWriter writer(other.toStdString());
        writer.writeMeta("description", "another");
        writer.commit();
        const QString copy2 = dir.filePath(QStringLiteral("copy2.peaklens"));
        MirrorSource source(other.toStdString());
        MirrorSink sink(copy2.toStdString(), "host:other");
        sink.apply(source.readDelta());
        TraceFollower follower(copy2.toStdString());
        follower.poll();
        sink.close();
        QVERIFY(QFile::copy(kSample, dir.filePath(QStringLiteral("sample"))));
        QCOMPARE(std::rename(qPrintable(dir.filePath(QStringLiteral("sample"))), qPrintable(copy2)), 0);
        QVERIFY_THROWS_EXCEPTION(ImportError, follower.poll());
    }

    void aDamagedDeltaIsRefusedAndKeepsWhatCameBefore_data()
    {
        QTest::addColumn<int>("cut");     // bytes of the second delta kept, -1: all
        QTest::addColumn<int>("corrupt"); // a byte of it set to 0xFF, -1: none
        QTest::addColumn<QString>("said");
        QTest::newRow("cut short") << 7 << -1 << "the end of an update too early";
        QTest::newRow("an unknown table") << -1 << 0 << "table 255";
        QTest::newRow("a wrong column count") << -1 << 1 << "columns for";
    }

    void aDamagedDeltaIsRefusedAndKeepsWhatCameBefore()
    {
        QFETCH(int, cut);
        QFETCH(int, corrupt);
        QFETCH(QString, said);
        QTemporaryDir dir;
        const QString original = dir.filePath(QStringLiteral("original.peaklens"));
        const QString copy = dir.filePath(QStringLiteral("copy.peaklens"));
        const auto sample = TraceReader::read(kSample.toStdString());
        TraceWriter writer(original.toStdString());
        writer.writeLane(0, sample->lanes.at(0));
        for (std::size_t i = 0; i < 100; ++i)
            writer.writeEvent(plainEvent(*sample, i));
        writer.commit();
        MirrorSource source(original.toStdString());
        MirrorSink sink(copy.toStdString(), "gpu1:/runs/original.peaklens");
        sink.apply(source.readDelta());
        for (std::size_t i = 100; i < 200; ++i)
            writer.writeEvent(plainEvent(*sample, i));
        writer.finish();
        std::string delta = source.readDelta();
        QVERIFY(delta.size() > 8);
        if (cut >= 0)
            delta.resize(static_cast<std::size_t>(cut));
        if (corrupt >= 0)
            delta[static_cast<std::size_t>(corrupt)] = '\xFF';
        try {
            sink.apply(delta);
            QFAIL("a damaged delta was applied");
        } catch (const ImportError &error) {
            const QString message = QString::fromUtf8(error.what());
            QVERIFY2(message.startsWith(QStringLiteral("gpu1:/runs/original.peaklens")) && message.contains(said),
                     qPrintable(message));
        }
        sink.close();
        QCOMPARE(TraceReader::read(copy.toStdString())->events.size(), std::size_t(100));
    }

    // Before its first rows arrive, a copy is already a trace this process is writing: a
    // reader that finds it then (the app, as a recording's first file appears) follows it.
    void aCopyIsBeingWrittenFromItsFirstMoment()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("copy.peaklens"));
        MirrorSink sink(copy.toStdString(), "gpu1:/runs/rank0.peaklens");
        TraceFollower follower(copy.toStdString());
        follower.poll();
        QCOMPARE(follower.writer(), TraceFollower::Writer::Writing);
        QCOMPARE(follower.localWriterPid(), std::optional<long>(::getpid()));
        QCOMPARE(follower.trace().events.size(), std::size_t(0));
        const auto opened = TraceReader::read(copy.toStdString());
        QCOMPARE(opened->metaValue(metakey::WriterState), std::string("writing"));
        QCOMPARE(opened->events.size(), std::size_t(0));
    }

    void nothingIsOverwrittenAndOnlyTracesAreSources()
    {
        QTemporaryDir dir;
        const QString existing = dir.filePath(QStringLiteral("mine.peaklens"));
        QVERIFY(QFile::copy(kSample, existing));
        const QByteArray before = bytesOf(existing);
        QVERIFY_THROWS_EXCEPTION(FileError, MirrorSink(existing.toStdString(), "host:x"));
        QCOMPARE(bytesOf(existing), before);
        const QString text = dir.filePath(QStringLiteral("notes.txt"));
        QFile file(text);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(200, 'x'));
        file.close();
        QVERIFY_THROWS_EXCEPTION(ImportError, MirrorSource(text.toStdString()).readDelta());
        // A file not there yet, or too short to say what it is, has nothing to send.
        // A file its writer has only just made has nothing to send yet; one not there is an error.
        const QString empty = dir.filePath(QStringLiteral("new.peaklens"));
        QVERIFY(QFile(empty).open(QIODevice::WriteOnly));
        QVERIFY(MirrorSource(empty.toStdString()).readDelta().empty());
        QVERIFY_THROWS_EXCEPTION(ImportError, MirrorSource(dir.filePath(QStringLiteral("gone")).toStdString()).readDelta());
    }
};

QTEST_GUILESS_MAIN(tst_TraceMirror)
#include "tst_tracemirror.moc"
