// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/tracetext.h"
#include "testsupport.h"
#include "tracefiledamage.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <sqlite3.h>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

// Everything the model holds: two devices, streams, segments, kernels, stacks, steps,
// nested ranges, an address above 2^63 and a free of a block from before the trace.
const char *const kRichTrace = R"(meta description every feature
meta command ["python", "train.py"]
layer model.blocks.0 kind=Block params=1MiB
begin step 0
reserve s 20MiB
begin fwd:model
begin fwd:model.blocks.0 thread=7
alloc a 256KiB activation stack=main@train.py:10;forward@model.py:20
alloc 0x8000000000001000 64 temporary device=cpu
kernel gemm 3us stream=5
free 0x8000000000001000
end fwd:model.blocks.0
end fwd:model
free 0x1000 512 gradient stream=5 @bwd:model.blocks.0
+1ms begin opt
alloc o 1MiB optimizer_state
end opt
free a @bwd:model.blocks.0 stack=backward@autograd.py:1
end step 0
t=5ms unreserve s
oom 2GiB device=cuda:1
snapshot 1MiB
)";

} // namespace

class tst_TraceFile : public QObject
{
    Q_OBJECT

private slots:
    void roundTripIsLossless_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addRow("every feature") << QString::fromUtf8(kRichTrace);
        QTest::addRow("empty trace") << QString();
        QTest::addRow("memory pools") << QStringLiteral(
            "reserve g 2MiB pool=1,0\nalloc a 1MiB pool=1,0\nalloc b 64 stream=5 pool=0,1\nfree a\n");
        QTest::addRow("stages, one of them the optimizer's")
            << QStringLiteral("begin other stage=nccl:all%20reduce\nalloc a 64\nbegin opt stage=Optimizer.step%23AdamW.step\n"
                              "end other stage=nccl:all%20reduce\nalloc b 32\nend opt stage=Optimizer.step%23AdamW.step\n");
        QFile sample(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        QVERIFY(sample.open(QIODevice::ReadOnly));
        QTest::addRow("bundled sample") << QString::fromUtf8(sample.readAll());
    }
    void roundTripIsLossless()
    {
        QFETCH(QString, text);
        QTemporaryDir dir;
        const auto original = parseTraceText(ss(text));
        const std::string path = ss(dir.filePath(QStringLiteral("trace.peaklens")));
        TraceWriter::writeTrace(*original, path);
        const auto loaded = TraceReader::read(path);
        QCOMPARE(qs(printTraceText(*loaded)), qs(printTraceText(*original)));
        QVERIFY(*loaded == *original);
        QVERIFY(!QFile::exists(qs(path) + QStringLiteral("-wal")));
    }

    // The sample ./run.sh opens is a real CPU recording of peaklens-replay.
    void bundledSampleIsARecording()
    {
        const auto sample = loadTrace(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        QCOMPARE(qs(sample->metaValue("source.format")), QStringLiteral("replay"));
        QVERIFY(!sample->metaValue("replay.spec").empty());
        QVERIFY(sample->steps.size() >= 2);
        QVERIFY(sample->events.size() > 1000);
        QVERIFY(sample->findLayer("blocks.0"));
        QTemporaryDir dir;
        const std::string copy = ss(dir.filePath(QStringLiteral("copy.peaklens")));
        TraceWriter::writeTrace(*sample, copy);
        QVERIFY(*TraceReader::read(copy) == *sample);
    }

    void neverOverwritesInPlace()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("existing.peaklens"));
        test::writeBytes(path, "keep me");
        QVERIFY_THROWS_EXCEPTION(FileError, TraceWriter(ss(path)));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("keep me"));
    }

    void streamingWriterCommitsAndFinishes()
    {
        QTemporaryDir dir;
        const std::string path = ss(dir.filePath(QStringLiteral("stream.peaklens")));
        {
            TraceWriter writer(path);
            writer.writeLane(0, Lane{});
            for (int i = 0; i < 100000; ++i)
                writer.writeEvent(MemoryEvent{i, i % 2 ? -8 : 8, 0x100});
            writer.commit();
            QCOMPARE(writer.committedEvents(), quint64(100000));
            writer.writeEvent(MemoryEvent{100000, 8, 0x200});
        } // the destructor finishes the file
        QVERIFY(!QFile::exists(qs(path) + QStringLiteral("-wal")));
        QCOMPARE(TraceReader::read(path)->events.size(), std::size_t(100001));
    }

    // A hot journal (a writer died mid-transaction) must be rolled back before the file reads
    // consistently: that happens in a private copy, never beside the input.
    void hotJournalIsRolledBackWithoutWritingBesideTheInput()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("trace.peaklens"));
        TraceWriter::writeTrace(*parseTraceText(kRichTrace), ss(path));
        sqlite3 *writer = nullptr;
        QCOMPARE(sqlite3_open(qPrintable(path), &writer), SQLITE_OK);
        QCOMPARE(sqlite3_exec(writer, "BEGIN; UPDATE meta SET value = 'half-written' WHERE key = 'description'", nullptr, nullptr,
                              nullptr),
                 SQLITE_OK);
        // Copied while the transaction is open: a database with its hot journal, as a crash leaves it.
        QTemporaryDir crashed;
        const QString copy = crashed.filePath(QStringLiteral("crashed.peaklens"));
        QVERIFY(QFile::copy(path, copy));
        QVERIFY(QFile::copy(path + QStringLiteral("-journal"), copy + QStringLiteral("-journal")));
        sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_close(writer);

        const QStringList before = QDir(crashed.path()).entryList(QDir::Files);
        const auto trace = loadTrace(ss(copy));
        QCOMPARE(trace->metaValue("description"), std::string("every feature"));
        QCOMPARE(QDir(crashed.path()).entryList(QDir::Files), before);
    }

    // A finished file is read as immutable: nothing appears beside it, whoever reads it.
    void readingWritesNothingBesideTheFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("trace.peaklens"));
        TraceWriter::writeTrace(*parseTraceText(kRichTrace), ss(path));
        // Even a file left in WAL mode, which SQLite would otherwise give a -wal and -shm.
        test::execSql(path, "PRAGMA journal_mode = WAL");
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("trace.peaklens")});
        QVERIFY(*TraceReader::read(ss(path)) == *parseTraceText(kRichTrace));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("trace.peaklens")});
    }

    void badFilesGetOneClearSentence_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("problem");
        QTest::addRow("missing") << QStringLiteral("missing") << QStringLiteral("does not exist");
        QTest::addRow("directory") << QStringLiteral("directory") << QStringLiteral("is a directory");
        QTest::addRow("empty file") << QStringLiteral("empty") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("random bytes") << QStringLiteral("random") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("text that is not a trace")
            << QStringLiteral("prose") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("cut inside the header") << QStringLiteral("header") << QStringLiteral("is truncated");
        QTest::addRow("cut in half") << QStringLiteral("half") << QStringLiteral("is truncated");
        QTest::addRow("another program's database") << QStringLiteral("foreign") << QStringLiteral("not a PeakLens trace");
        QTest::addRow("newer format") << QStringLiteral("newer") << QStringLiteral("newer PeakLens");
        QTest::addRow("missing table") << QStringLiteral("droptable") << QStringLiteral("the table \"ranges\" is missing");
        QTest::addRow("dangling layer reference") << QStringLiteral("nolayers") << QStringLiteral("refers to layer");
        QTest::addRow("column of the wrong length") << QStringLiteral("shortcolumn") << QStringLiteral("wrong length");
        QTest::addRow("unknown category code")
            << QStringLiteral("category") << QStringLiteral("in events chunk 0, an event has an unknown category");
        QTest::addRow("unknown codec") << QStringLiteral("codec")
                                       << QStringLiteral("events chunk 0 is stored with the unknown codec 7");
        QTest::addRow("plain chunk said to be compressed")
            << QStringLiteral("notzstd") << QStringLiteral("in events chunk 0, its compressed columns are not a zstd frame");
        QTest::addRow("format 1: column of the wrong length")
            << QStringLiteral("v1shortcolumn") << QStringLiteral("wrong length");
        QTest::addRow("format 1: unknown category code")
            << QStringLiteral("v1category") << QStringLiteral("in events chunk 0, an event has an unknown category");
        QTest::addRow("stacks out of sequence (found by fuzzing)")
            << QStringLiteral("stackorder") << QStringLiteral("out of sequence");
        QTest::addRow("stack cycle") << QStringLiteral("stackcycle") << QStringLiteral("bad parent");
        QTest::addRow("overwritten pages") << QStringLiteral("scribble") << QStringLiteral("is damaged");
        QTest::addRow("generated column") << QStringLiteral("generated")
                                          << QStringLiteral("table \"steps\" is not defined as PeakLens defines it");
        QTest::addRow("view") << QStringLiteral("view")
                              << QStringLiteral("has the view \"everything\", which PeakLens does not write");
        QTest::addRow("trigger") << QStringLiteral("trigger") << QStringLiteral("has the trigger \"wipe\"");
        QTest::addRow("index on an expression") << QStringLiteral("exprindex") << QStringLiteral("has the index \"slow\"");
        QTest::addRow("check constraint") << QStringLiteral("redefined") << QStringLiteral("table \"markers\" is not defined");
        QTest::addRow("bad trace text") << QStringLiteral("badtext") << QStringLiteral("line 2: block \"b\" was never allocated");
    }
    void badFilesGetOneClearSentence()
    {
        QFETCH(QString, damage);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.peaklens"));
        test::writeDamagedTrace(path, damage, kRichTrace);
        try {
            loadTrace(ss(path));
            QFAIL("the file was accepted");
        } catch (const ImportError &error) {
            const QString message = qs(error.what());
            QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
            QVERIFY2(message.contains(problem), qPrintable(message));
            QVERIFY2(!message.contains(QLatin1Char('\n')), qPrintable(message));
        }
    }
};

QTEST_GUILESS_MAIN(tst_TraceFile)
#include "tst_tracefile.moc"
