// SPDX-License-Identifier: Apache-2.0
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/tracebuilder.h"
#include "core/trace/tracetext.h"
#include "testsupport.h"
#include "tracefiledamage.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <atomic>

using namespace peaklens;
using peaklens::test::ss;

namespace {

const char *const kSmallTrace = R"(layer model.blocks.0
reserve s 20MiB
begin fwd:model.blocks.0
alloc a 256KiB activation stack=main@train.py:10
alloc b 64 temporary
free b
end fwd:model.blocks.0
free a @bwd:model.blocks.0
kernel gemm 3us
)";

// Enough events for several chunks of the file, so progress has steps between 0 and 1.
std::shared_ptr<const Trace> manyEvents(std::size_t count)
{
    TraceBuilder builder;
    const std::uint32_t lane = builder.lane(Lane{});
    for (std::size_t i = 0; i < count; ++i)
        builder.addEvent(MemoryEvent{static_cast<std::int64_t>(i), i % 2 ? -64 : 64, 0x1000, lane});
    return builder.finish();
}

// How the file reaches the reader: where it lies, with a write-ahead log beside it (read
// in a private copy), or whole in memory (from a pipe).
enum class Placement { InPlace, WithLog, InMemory };

std::shared_ptr<const Trace> readAs(Placement placement, const QString &path, const Progress &progress)
{
    if (placement == Placement::InMemory) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return nullptr;
        const QByteArray bytes = file.readAll();
        return TraceReader::readImage(ss(path), std::span(bytes.constData(), static_cast<std::size_t>(bytes.size())), progress);
    }
    return TraceReader::read(ss(path), progress);
}

} // namespace

class tst_TraceReader : public QObject
{
    Q_OBJECT

private slots:
    void init()
    {
        // The private copies go here, so a test can see that none is left behind.
        QVERIFY(m_temp.isValid());
        m_savedTmp = qgetenv("TMPDIR");
        qputenv("TMPDIR", QFile::encodeName(m_temp.path()));
    }

    void cleanup()
    {
        qputenv("TMPDIR", m_savedTmp);
        QCOMPARE(QDir(m_temp.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList());
    }

    void progressRisesToOne_data()
    {
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("placement");
        QTest::addRow("no events") << 0 << int(Placement::InPlace);
        QTest::addRow("one chunk of events") << 1000 << int(Placement::InPlace);
        QTest::addRow("several chunks of events") << 300000 << int(Placement::InPlace);
        QTest::addRow("several chunks, beside a write-ahead log") << 300000 << int(Placement::WithLog);
        QTest::addRow("several chunks, in memory") << 300000 << int(Placement::InMemory);
    }
    void progressRisesToOne()
    {
        QFETCH(int, events);
        QFETCH(int, placement);
        const QString path = writeTrace(*manyEvents(static_cast<std::size_t>(events)), static_cast<Placement>(placement));
        std::vector<double> reports;
        Progress progress;
        progress.report = [&reports](double fraction) { reports.push_back(fraction); };
        const auto trace = readAs(static_cast<Placement>(placement), path, progress);
        QVERIFY(trace);
        QCOMPARE(trace->events.size(), std::size_t(events));
        QVERIFY(!reports.empty());
        QCOMPARE(reports.back(), 1.0);
        QVERIFY(reports.front() >= 0.0);
        QVERIFY(std::is_sorted(reports.begin(), reports.end()));
        // The events are read a chunk at a time, each chunk reported.
        const auto between = std::count_if(reports.begin(), reports.end(), [](double f) { return f > 0.0 && f < 1.0; });
        QVERIFY2(events < 200000 || between >= 3, qPrintable(QString::number(between)));
    }

    void cancelFromProgressEndsTheRead_data()
    {
        QTest::addColumn<int>("placement");
        QTest::addColumn<int>("reportsBeforeCancel");
        QTest::addRow("in place, at the first report") << int(Placement::InPlace) << 1;
        QTest::addRow("in place, while reading the events") << int(Placement::InPlace) << 3;
        QTest::addRow("beside a write-ahead log, at the first report") << int(Placement::WithLog) << 1;
        QTest::addRow("beside a write-ahead log, while reading the events") << int(Placement::WithLog) << 3;
        QTest::addRow("in memory, at the first report") << int(Placement::InMemory) << 1;
    }
    void cancelFromProgressEndsTheRead()
    {
        QFETCH(int, placement);
        QFETCH(int, reportsBeforeCancel);
        const QString path = writeTrace(*manyEvents(300000), static_cast<Placement>(placement));
        std::atomic<bool> cancel = false;
        int reports = 0;
        Progress progress;
        progress.cancel = &cancel;
        progress.report = [&](double) {
            if (++reports == reportsBeforeCancel)
                cancel = true;
        };
        QVERIFY_THROWS_EXCEPTION(Cancelled, readAs(static_cast<Placement>(placement), path, progress));
        QCOMPARE(reports, reportsBeforeCancel);
        // cleanup() checks that no private copy is left.
    }

    // The loader hands its progress to the native reader: on its own it reports only its
    // start (0), so a later report, the last at 1, and a cancel there come from the reader.
    void loaderPassesProgressToTheReader_data()
    {
        QTest::addColumn<bool>("cancelAtSecondReport");
        QTest::addRow("read to the end") << false;
        QTest::addRow("cancelled") << true;
    }
    void loaderPassesProgressToTheReader()
    {
        QFETCH(bool, cancelAtSecondReport);
        const QString path = writeTrace(*parseTraceText(kSmallTrace), Placement::InPlace);
        std::atomic<bool> cancel = false;
        std::vector<double> reports;
        Progress progress;
        progress.cancel = &cancel;
        progress.report = [&](double fraction) {
            reports.push_back(fraction);
            if (cancelAtSecondReport && reports.size() == 2)
                cancel = true;
        };
        if (cancelAtSecondReport) {
            QVERIFY_THROWS_EXCEPTION(Cancelled, loadTrace(ss(path), progress));
            QCOMPARE(reports.size(), std::size_t(2));
        } else {
            QCOMPARE(loadTrace(ss(path), progress)->events.size(), std::size_t(4));
            QVERIFY(reports.size() > 2);
            QCOMPARE(reports.back(), 1.0);
        }
    }

private:
    QString writeTrace(const Trace &trace, Placement placement)
    {
        const QString path = m_files.filePath(QStringLiteral("trace.peaklens"));
        QFile::remove(path);
        QFile::remove(path + QStringLiteral("-wal"));
        TraceWriter::writeTrace(trace, ss(path));
        if (placement == Placement::WithLog) {
            // A file in WAL mode with a log beside it, as a writer that was killed leaves it.
            test::execSql(path, "PRAGMA journal_mode = WAL");
            test::writeBytes(path + QStringLiteral("-wal"), QByteArray());
        }
        return path;
    }

    QTemporaryDir m_files;
    QTemporaryDir m_temp;
    QByteArray m_savedTmp;
};

QTEST_GUILESS_MAIN(tst_TraceReader)
#include "tst_tracereader.moc"
