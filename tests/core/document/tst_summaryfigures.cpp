// SPDX-License-Identifier: Apache-2.0
// The figures a summary shows, stored in the native file by its writer: a file written as
// convert writes it is summarized from them without reading its events, to the same
// answer as its events give; figures of another analysis version, for other events,
// damaged or disagreeing with the file's running totals are passed over for the events.
#include "core/document/filesummary.h"
#include "core/document/summaryfigures.h"
#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/format/schema.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/report/summaryjson.h"
#include "testsupport.h"
#include "twodevicetrace.h"

#include <QTemporaryDir>
#include <QTest>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

const QString kSource = QStringLiteral(PEAKLENS_SOURCE_DIR "/");

// Several chunks of steps on two devices.
std::shared_ptr<const Trace> stepsOnTwoDevices(bool lifetimes)
{
    return peaklens::test::twoDeviceTrace(3 * schema::kEventsPerChunk / (12 * 80) + 1, lifetimes);
}

// The trace written as convert writes it: with its summary figures.
void writeWithFigures(const Trace &trace, const QString &path)
{
    OutputFile output(ss(path), OutputFile::Existing::Replace);
    TraceWriter::writeTrace(trace, output, storeSummaryFigures);
}

std::string jsonOf(const FileSummary &file)
{
    return summaryToJson(*file.trace, file.summary, std::nullopt);
}

// The summary of the trace loaded whole, which stored figures must equal.
std::string wholeSummaryJson(const QString &path)
{
    const auto trace = loadTrace(ss(path));
    return summaryToJson(*trace, summarize(*trace), std::nullopt);
}

std::int64_t storedRows(const QString &path)
{
    SqliteDatabase db(ss(path), SQLITE_OPEN_READONLY);
    return db.queryInteger("SELECT count(*) FROM figures");
}

} // namespace

class tst_SummaryFigures : public QObject
{
    Q_OBJECT

private slots:
    void summarizedFromTheFigures_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("make");
        QTest::addRow("bundled sample") << kSource + QStringLiteral("resources/samples/training-step.peaklens") << QString();
        QTest::addRow("real snapshot (categories from lifetimes)")
            << kSource + QStringLiteral("tests/data/real/snapshot_cs336_medium_train.pickle.gz") << QString();
        QTest::addRow("real snapshot with pools, streams and a graph")
            << kSource + QStringLiteral("tests/data/real/snapshot_h200_pools_streams_graph.pickle.gz") << QString();
        QTest::addRow("real snapshot of two devices, state only")
            << kSource + QStringLiteral("tests/data/real/snapshot_state_only_two_devices.pickle.gz") << QString();
        QTest::addRow("real Kineto trace") << kSource + QStringLiteral("tests/data/real/kineto_v100_rank1.pt.trace.json.gz")
                                           << QString();
        QTest::addRow("real Kineto trace from ROCm")
            << kSource + QStringLiteral("tests/data/real/kineto_mi300x_normalization.pt.trace.json.gz") << QString();
        QTest::addRow("several chunks on two devices") << QString() << QStringLiteral("two devices");
        QTest::addRow("several chunks, categories from lifetimes") << QString() << QStringLiteral("lifetimes");
    }
    void summarizedFromTheFigures()
    {
        QFETCH(QString, input);
        QFETCH(QString, make);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("written.peaklens"));
        writeWithFigures(input.isEmpty() ? *stepsOnTwoDevices(make == QLatin1String("lifetimes")) : *loadTrace(ss(input)), path);
        QCOMPARE(storedRows(path), std::int64_t(1));

        const FileSummary stored = summarizeFile(ss(path));
        QVERIFY(stored.stored);
        QVERIFY(!stored.streamed);
        QVERIFY(stored.trace->events.empty());
        const FileSummary computed = summarizeFile(ss(path), {}, StoredFigures::Ignore);
        QVERIFY(!computed.stored);
        QCOMPARE(jsonOf(stored), jsonOf(computed));
        QCOMPARE(jsonOf(stored), wholeSummaryJson(path));
    }

    // Figures that cannot stand for the events are passed over: the events give the answer.
    void passedOver_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addRow("another analysis version") << QStringLiteral("UPDATE figures SET analysis = analysis + 1");
        QTest::addRow("for other events") << QStringLiteral("UPDATE figures SET events = events - 1");
        QTest::addRow("cut short") << QStringLiteral("UPDATE figures SET summary = substr(summary, 1, length(summary) / 2)");
        QTest::addRow("a varint past 64 bits") << QStringLiteral("UPDATE figures SET summary = x'ffffffffffffffffffffff01'");
        QTest::addRow("empty") << QStringLiteral("UPDATE figures SET summary = x''");
        QTest::addRow("text, not bytes") << QStringLiteral("UPDATE figures SET summary = 'figures'");
        QTest::addRow("one value too many") << QStringLiteral("UPDATE figures SET summary = summary || x'00'");
        QTest::addRow("no row") << QStringLiteral("DELETE FROM figures");
    }
    void passedOver()
    {
        QFETCH(QString, change);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("changed.peaklens"));
        writeWithFigures(*stepsOnTwoDevices(false), path);
        {
            SqliteDatabase db(ss(path), SQLITE_OPEN_READWRITE);
            db.exec(ss(change));
        }
        const FileSummary file = summarizeFile(ss(path));
        QVERIFY(!file.stored);
        QVERIFY(file.streamed);
        QCOMPARE(jsonOf(file), wholeSummaryJson(path));
    }

    // Well-formed figures that the running totals contradict, or that name what the file
    // does not define, are not believed.
    void disagreeingFiguresArePassedOver_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addRow("another peak") << QStringLiteral("peak");
        QTest::addRow("another event count") << QStringLiteral("events");
        QTest::addRow("a layer too many") << QStringLiteral("layers");
        QTest::addRow("an unknown stack in the live set") << QStringLiteral("stack");
    }
    void disagreeingFiguresArePassedOver()
    {
        QFETCH(QString, change);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("lying.peaklens"));
        writeWithFigures(*stepsOnTwoDevices(false), path);
        const FileSummary truth = summarizeFile(ss(path), {}, StoredFigures::Ignore);
        TraceSummary lie = truth.summary;
        QVERIFY(lie.peak.primary && lie.peak.liveAtPeak);
        if (change == QLatin1String("peak"))
            lie.peak.devices[*lie.peak.primary].allocatedBytes += 512;
        else if (change == QLatin1String("events"))
            ++lie.eventCount;
        else if (change == QLatin1String("layers"))
            lie.layers.push_back(LayerStats{});
        else
            lie.peak.liveAtPeak->byStack.push_back(LiveGroup{0, 1, 1, 999999});
        TraceWriter::storeFigures(ss(path), kSummaryFiguresVersion, truth.summary.eventCount, encodeFigures(lie));

        const FileSummary file = summarizeFile(ss(path));
        QVERIFY(!file.stored);
        QCOMPARE(jsonOf(file), jsonOf(truth));
    }

    // Figures are stored only in a complete file of this format, for its own events.
    void storingRefusesOtherFiles()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("trace.peaklens"));
        writeWithFigures(*stepsOnTwoDevices(false), path);
        const FileSummary file = summarizeFile(ss(path));
        QVERIFY_THROWS_EXCEPTION(FileError, TraceWriter::storeFigures(ss(path), kSummaryFiguresVersion,
                                                                      file.summary.eventCount + 1, encodeFigures(file.summary)));
        QVERIFY(summarizeFile(ss(path)).stored); // what it held is kept

        // Nor in one its streaming writer has not finished.
        const QString writing = dir.filePath(QStringLiteral("writing.peaklens"));
        {
            TraceWriter writer(ss(writing));
            writer.writeLane(0, Lane{});
            writer.writeEvent(MemoryEvent{1, 512, 0x1000, 0, kNoLayer, 0, Category::Activation, Phase::Forward});
            writer.commit();
            QVERIFY_THROWS_EXCEPTION(FileError, storeSummaryFigures(ss(writing)));
        }
        storeSummaryFigures(ss(writing)); // finished now
        QVERIFY(summarizeFile(ss(writing)).stored);

        const QString format2 = kSource + QStringLiteral("tests/data/format/training-step.v2.peaklens");
        const QString copy = dir.filePath(QStringLiteral("v2.peaklens"));
        QVERIFY(QFile::copy(format2, copy));
        QVERIFY_THROWS_EXCEPTION(FileError, storeSummaryFigures(ss(copy)));
        QVERIFY(!summarizeFile(ss(copy)).stored);
        QVERIFY(summarizeFile(ss(copy)).streamed);
    }

    // The committed file of format 3 holds the figures this build's analysis computes. When
    // a change to the analysis makes this fail, raise kSummaryFiguresVersion and write the
    // file again (peaklens-cli convert tests/data/format/training-step.v2.peaklens ...).
    void committedFiguresAreThisAnalysis()
    {
        const QString path = kSource + QStringLiteral("tests/data/format/training-step.v3.peaklens");
        const FileSummary stored = summarizeFile(ss(path));
        QVERIFY(stored.stored);
        QCOMPARE(jsonOf(stored), jsonOf(summarizeFile(ss(path), {}, StoredFigures::Ignore)));
        QCOMPARE(jsonOf(stored), wholeSummaryJson(path));
    }
};

QTEST_GUILESS_MAIN(tst_SummaryFigures)
#include "tst_summaryfigures.moc"
