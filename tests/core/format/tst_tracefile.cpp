#include "core/error.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/tracetext.h"
#include "testsupport.h"
#include "tracefiledamage.h"

#include <QFile>
#include <QTemporaryDir>


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

    void badFilesGetOneClearSentence_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("problem");
        QTest::addRow("missing") << QStringLiteral("missing") << QStringLiteral("does not exist");
        QTest::addRow("directory") << QStringLiteral("directory") << QStringLiteral("is a directory");
        QTest::addRow("empty file") << QStringLiteral("empty") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("random bytes") << QStringLiteral("random") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("text that is not a trace") << QStringLiteral("prose") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("cut inside the header") << QStringLiteral("header") << QStringLiteral("is truncated");
        QTest::addRow("cut in half") << QStringLiteral("half") << QStringLiteral("is truncated");
        QTest::addRow("another program's database") << QStringLiteral("foreign") << QStringLiteral("not a PeakLens trace");
        QTest::addRow("newer format") << QStringLiteral("newer") << QStringLiteral("newer PeakLens");
        QTest::addRow("missing table") << QStringLiteral("droptable") << QStringLiteral("the table \"ranges\" is missing");
        QTest::addRow("dangling layer reference") << QStringLiteral("nolayers") << QStringLiteral("refers to layer");
        QTest::addRow("column of the wrong length") << QStringLiteral("shortcolumn") << QStringLiteral("wrong length");
        QTest::addRow("unknown category code") << QStringLiteral("category") << QStringLiteral("unknown category");
        QTest::addRow("stacks out of sequence (found by fuzzing)") << QStringLiteral("stackorder") << QStringLiteral("out of sequence");
        QTest::addRow("stack cycle") << QStringLiteral("stackcycle") << QStringLiteral("bad parent");
        QTest::addRow("overwritten pages") << QStringLiteral("scribble") << QStringLiteral("is damaged");
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
