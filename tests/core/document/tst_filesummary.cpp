// SPDX-License-Identifier: Apache-2.0
// A native file summarized as it is read, a chunk at a time, gives the figures of the file
// loaded whole; and files that cannot be read that way are loaded whole. A file too big to
// hold opens as the window around its peak, with the file's levels.
#include "core/analysis/lanedevices.h"
#include "core/analysis/liveblocks.h"
#include "core/analysis/peakfinder.h"
#include "core/document/fileoverview.h"
#include "core/document/filesummary.h"
#include "core/format/schema.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/report/summaryjson.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "testsupport.h"
#include "twodevicetrace.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <cmath>
#include <limits>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;
using peaklens::test::twoDeviceTrace;

namespace {

const QString kSource = QStringLiteral(PEAKLENS_SOURCE_DIR "/");

// The events written in an order other than time's, as a collector's threads might.
void writeOutOfOrder(const Trace &trace, const QString &path)
{
    TraceWriter writer(ss(path), TraceWriter::Mode::Bulk);
    for (std::uint32_t i = 0; i < trace.lanes.size(); ++i)
        writer.writeLane(i, trace.lanes[i]);
    for (std::uint32_t i = 0; i < trace.layers.size(); ++i)
        writer.writeLayer(i, trace.layers[i]);
    for (std::size_t i = 0; i < trace.events.size(); ++i)
        writer.writeEvent(trace.events.at((i ^ 1) < trace.events.size() ? i ^ 1 : i));
    for (const Range &range : trace.ranges)
        writer.writeRange(range);
    for (const Step &step : trace.steps)
        writer.writeStep(step);
    writer.finish();
}

// A file as made for a row: converted from `file`, or generated (two devices), as is.
QString madeFile(const QString &file, const QString &make, const QTemporaryDir &dir)
{
    if (make.isEmpty())
        return file;
    const QString path = dir.filePath(QStringLiteral("made.peaklens"));
    if (make == QLatin1String("convert")) {
        TraceWriter::writeTrace(*loadTrace(ss(file)), ss(path));
        return path;
    }
    const auto trace = twoDeviceTrace(3 * schema::kEventsPerChunk / (12 * 80) + 1, make == QLatin1String("lifetimes"));
    if (make == QLatin1String("out of order")) {
        writeOutOfOrder(*trace, path);
        return path;
    }
    TraceWriter::writeTrace(*trace, ss(path));
    if (make == QLatin1String("wrong totals")) {
        SqliteDatabase db(ss(path), SQLITE_OPEN_READWRITE);
        db.exec("UPDATE events SET totals = x'0000'"); // no lanes, no devices
    }
    return path;
}

std::string wholeSummaryJson(const QString &path)
{
    const auto trace = loadTrace(ss(path));
    return summaryToJson(*trace, summarize(*trace), std::nullopt);
}

} // namespace

class tst_FileSummary : public QObject
{
    Q_OBJECT

private slots:
    void sameFiguresAsTheWholeFile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("make");
        QTest::addColumn<bool>("streamed");
        QTest::addRow("bundled sample, format 2")
            << kSource + QStringLiteral("resources/samples/training-step.peaklens") << QString() << true;
        QTest::addRow("format 1: read whole")
            << kSource + QStringLiteral("tests/data/format/training-step.v1.peaklens") << QString() << false;
        QTest::addRow("trace text: read whole")
            << kSource + QStringLiteral("tests/data/modelled-step.pltxt") << QString() << false;
        QTest::addRow("real Kineto trace, converted (categories from lifetimes)")
            << kSource + QStringLiteral("tests/data/real/kineto_v100_rank1.pt.trace.json.gz") << QStringLiteral("convert")
            << true;
        QTest::addRow("real snapshot, converted (categories from lifetimes)")
            << kSource + QStringLiteral("tests/data/real/snapshot_cs336_medium_train.pickle.gz") << QStringLiteral("convert")
            << true;
        QTest::addRow("real snapshot of another run, converted")
            << kSource + QStringLiteral("tests/data/real/snapshot_cs336_compiled_train.pickle.gz") << QStringLiteral("convert")
            << true;
        QTest::addRow("real Kineto trace from ROCm, converted")
            << kSource + QStringLiteral("tests/data/real/kineto_mi300x_normalization.pt.trace.json.gz")
            << QStringLiteral("convert") << true;
        QTest::addRow("several chunks on two devices") << QString() << QStringLiteral("two devices") << true;
        QTest::addRow("several chunks, categories from lifetimes") << QString() << QStringLiteral("lifetimes") << true;
        QTest::addRow("events out of time order: read whole") << QString() << QStringLiteral("out of order") << false;
        QTest::addRow("running totals that point elsewhere: read twice") << QString() << QStringLiteral("wrong totals") << true;
    }
    void sameFiguresAsTheWholeFile()
    {
        QFETCH(QString, file);
        QFETCH(QString, make);
        QFETCH(bool, streamed);
        QTemporaryDir dir;
        const QString path = madeFile(file, make, dir);
        const FileSummary summary = summarizeFile(ss(path));
        QCOMPARE(summary.streamed, streamed);
        QCOMPARE(summary.trace->events.empty(), streamed);
        QVERIFY(summary.summary.eventCount > 0);
        QCOMPARE(summaryToJson(*summary.trace, summary.summary, std::nullopt), wholeSummaryJson(path));
    }

    void windowAroundThePeak_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("make");
        QTest::addColumn<bool>("windowed");
        QTest::addRow("several chunks on two devices") << QString() << QStringLiteral("two devices") << true;
        QTest::addRow("several chunks, categories from lifetimes") << QString() << QStringLiteral("lifetimes") << true;
        QTest::addRow("one chunk: read whole")
            << kSource + QStringLiteral("resources/samples/training-step.peaklens") << QString() << false;
        QTest::addRow("format 1: read whole")
            << kSource + QStringLiteral("tests/data/format/training-step.v1.peaklens") << QString() << false;
        QTest::addRow("events out of time order: read whole") << QString() << QStringLiteral("out of order") << false;
        QTest::addRow("running totals that name no peak: read whole") << QString() << QStringLiteral("wrong totals") << false;
    }
    void windowAroundThePeak()
    {
        QFETCH(QString, file);
        QFETCH(QString, make);
        QFETCH(bool, windowed);
        QTemporaryDir dir;
        const QString path = madeFile(file, make, dir);
        const auto window = readPeakWindow(ss(path), schema::kEventsPerChunk, 0);
        QCOMPARE(window.has_value(), windowed);
        if (!window)
            return;
        const auto whole = loadTrace(ss(path));
        QCOMPARE(window->fileEvents, whole->events.size());
        QVERIFY(window->readEvents >= schema::kEventsPerChunk || window->firstEvent + window->readEvents == whole->events.size());
        QVERIFY(window->readEvents < whole->events.size());
        const Trace &trace = *window->trace;
        QCOMPARE(trace.events.size(), window->carriedBlocks + window->readEvents);

        // First the blocks live before the window, as the whole trace has them, at its start.
        const LaneDevices lanes(*whole);
        LiveBlocks live;
        for (std::size_t i = 0; i < window->firstEvent; ++i)
            live.apply(whole->events, i, i, lanes.deviceOfLane[whole->events.lane(i)]);
        const auto carried = live.blocksInOrder();
        QCOMPARE(carried.size(), window->carriedBlocks);
        const std::int64_t beginNs = whole->events.timeNs(window->firstEvent);
        for (std::size_t i = 0; i < carried.size(); ++i) {
            const MemoryEvent &block = trace.events.at(i);
            const MemoryEvent &allocation = whole->events.at(carried[i].event);
            QCOMPARE(block, (MemoryEvent{beginNs, allocation.deltaBytes, allocation.addr, allocation.lane, allocation.layer,
                                         allocation.stack, allocation.category, allocation.phase}));
        }
        // Then the file's events, as the whole read has them.
        for (std::size_t i = 0; i < window->readEvents; ++i)
            QCOMPARE(trace.events.at(window->carriedBlocks + i), whole->events.at(window->firstEvent + i));

        // The peak and what is live at it are the file's.
        const PeakReport inWindow = findPeaks(trace), inFile = findPeaks(*whole);
        QVERIFY(inWindow.primary && inFile.primary);
        const DevicePeak &windowPeak = inWindow.devices[*inWindow.primary], &filePeak = inFile.devices[*inFile.primary];
        QCOMPARE(windowPeak.device, filePeak.device);
        QCOMPARE(windowPeak.allocatedBytes, filePeak.allocatedBytes);
        QCOMPARE(windowPeak.timeNs, filePeak.timeNs);
        QCOMPARE(inWindow.liveAtPeak->bytes, inFile.liveAtPeak->bytes);
        QCOMPARE(inWindow.liveAtPeak->allocations.size(), inFile.liveAtPeak->allocations.size());

        // Ranges, steps, kernels and markers are exactly the file's that overlap the window
        // (read from the file for it alone), and it says what it left out.
        const std::int64_t endNs = trace.events.timeNs(trace.events.size() - 1);
        const auto overlapping = [&](const auto &items, auto times) {
            std::remove_cvref_t<decltype(items)> kept;
            for (const auto &item : items) {
                if (const auto [begin, end] = times(item); end >= beginNs && begin <= endNs)
                    kept.push_back(item);
            }
            return kept;
        };
        const auto span = [](const auto &item) { return std::pair(item.beginNs, item.endNs); };
        QVERIFY(trace.ranges == overlapping(whole->ranges, span));
        QVERIFY(trace.steps == overlapping(whole->steps, span));
        QVERIFY(trace.kernels == overlapping(whole->kernels, span));
        QVERIFY(trace.markers == overlapping(whole->markers, [](const Marker &m) { return std::pair(m.timeNs, m.timeNs); }));
        QVERIFY(trace.ranges.size() < whole->ranges.size() || whole->ranges.empty());
        QVERIFY(trace.kernels.size() < whole->kernels.size() || whole->kernels.empty());
        QVERIFY2(qs(trace.metaValue(metakey::ImportWarnings)).contains(QStringLiteral("too many to hold at once")),
                 trace.metaValue(metakey::ImportWarnings).c_str());
    }

    // A read of the tables alone takes every other table whole and, of the timed ones
    // (ranges, steps, kernels, markers), the rows that overlap its span.
    void timedTablesWithinASpan_data()
    {
        QTest::addColumn<double>("from"); // fractions of the trace's time; NaN: the span's own bound
        QTest::addColumn<double>("to");
        QTest::addColumn<bool>("none");
        const double open = std::numeric_limits<double>::quiet_NaN();
        QTest::addRow("every row") << open << open << false;
        QTest::addRow("no row") << open << open << true;
        QTest::addRow("a stretch in the middle") << 0.4 << 0.6 << false;
        QTest::addRow("one instant") << 0.5 << 0.5 << false;
        QTest::addRow("before the trace") << -0.5 << -0.1 << false;
        QTest::addRow("from the middle on") << 0.5 << open << false;
    }

    void timedTablesWithinASpan()
    {
        QFETCH(double, from);
        QFETCH(double, to);
        QFETCH(bool, none);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("span.peaklens"));
        const auto whole = twoDeviceTrace(4);
        TraceWriter::writeTrace(*whole, ss(path));
        const std::int64_t first = whole->steps.front().beginNs, last = whole->steps.back().endNs;
        const auto at = [&](double fraction, std::int64_t bound) {
            return std::isnan(fraction) ? bound : first + static_cast<std::int64_t>(fraction * static_cast<double>(last - first));
        };
        const TimeSpan span = none ? TraceReader::kNoTime : TimeSpan{at(from, INT64_MIN), at(to, INT64_MAX)};
        const auto tables = TraceReader::readTables(ss(path), span);
        QVERIFY(tables->events.empty());
        QVERIFY(tables->layers == whole->layers);
        QVERIFY(tables->lanes == whole->lanes);
        const auto overlapping = [&](const auto &items) {
            std::remove_cvref_t<decltype(items)> kept;
            for (const auto &item : items) {
                if (item.endNs >= span.beginNs && item.beginNs <= span.endNs)
                    kept.push_back(item);
            }
            return kept;
        };
        QVERIFY(tables->ranges == overlapping(whole->ranges));
        QVERIFY(tables->steps == overlapping(whole->steps));
        QVERIFY(tables->kernels == overlapping(whole->kernels));
        if (none || (std::isnan(from) && std::isnan(to)))
            QCOMPARE(tables->ranges.size(), none ? std::size_t(0) : whole->ranges.size());
    }

    // A file's overview: per chunk, the lowest and highest bytes its events reach on the
    // peak's device, as the whole trace has them, and the peak; from its chunk rows alone.
    void overviewFromTheRunningTotals()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("levels.peaklens"));
        const auto written = twoDeviceTrace(3 * schema::kEventsPerChunk / (12 * 80) + 1);
        TraceWriter::writeTrace(*written, ss(path));
        const auto overview = readFileOverview(ss(path));
        QVERIFY(overview);
        const auto whole = loadTrace(ss(path));
        QCOMPARE(overview->events, whole->events.size());
        const PeakReport peaks = findPeaks(*whole);
        const DevicePeak &peak = peaks.devices[*peaks.primary];
        QCOMPARE(overview->device, peak.device);
        QCOMPARE(overview->peakBytes, peak.allocatedBytes);

        const LaneDevices lanes(*whole);
        const auto device = *lanes.indexOf(peak.device);
        const std::size_t chunks = (whole->events.size() + schema::kEventsPerChunk - 1) / schema::kEventsPerChunk;
        QCOMPARE(overview->high.size(), chunks + 1); // and where the last one ends
        QCOMPARE(overview->low.size(), chunks + 1);
        std::int64_t bytes = 0;
        for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
            const std::size_t begin = chunk * schema::kEventsPerChunk;
            const std::size_t end = std::min(whole->events.size(), begin + schema::kEventsPerChunk);
            std::int64_t low = INT64_MAX, high = INT64_MIN;
            for (std::size_t i = begin; i < end; ++i) {
                if (lanes.deviceOfLane[whole->events.lane(i)] != device)
                    continue;
                bytes += whole->events.deltaBytes(i);
                low = std::min(low, bytes);
                high = std::max(high, bytes);
            }
            QCOMPARE(overview->high[chunk], (SeriesPoint{whole->events.timeNs(begin), high}));
            QCOMPARE(overview->low[chunk], (SeriesPoint{whole->events.timeNs(begin), low}));
        }
        QCOMPARE(overview->high.back().timeNs, whole->events.timeNs(whole->events.size() - 1));

        // Only for files of at least so many events, of a format with running totals.
        QVERIFY(!readFileOverview(ss(path), whole->events.size() + 1));
        QVERIFY(readFileOverview(ss(path), whole->events.size()));
        QVERIFY(!readFileOverview(ss(kSource + QStringLiteral("tests/data/format/training-step.v1.peaklens"))));
        QVERIFY(!readFileOverview(ss(kSource + QStringLiteral("tests/data/modelled-step.pltxt"))));
    }

    void damageIsReportedAsWhenReadWhole()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("damaged.peaklens"));
        TraceWriter::writeTrace(*twoDeviceTrace(80), ss(path));
        {
            SqliteDatabase db(ss(path), SQLITE_OPEN_READWRITE);
            db.exec("UPDATE events SET codec = 9 WHERE chunk = 1");
        }
        try {
            summarizeFile(ss(path));
            QFAIL("the damaged file was summarized");
        } catch (const ImportError &error) {
            QVERIFY2(qs(error.what()).contains(QStringLiteral("events chunk 1 is stored with the unknown codec 9")),
                     error.what());
        }
    }

    // A window may begin at a time instead of at the peak: with the chunk that reaches it,
    // after the blocks live before it, its events the file's; a time past the end gives
    // the last chunk.
    void windowFromATime_data()
    {
        QTest::addColumn<double>("at"); // where the time lies, as a share of the file's events
        QTest::addRow("the start") << 0.0;
        QTest::addRow("the middle") << 0.5;
        QTest::addRow("past the end") << 2.0;
    }
    void windowFromATime()
    {
        QFETCH(double, at);
        QTemporaryDir dir;
        const QString path = madeFile(QString(), QStringLiteral("two devices"), dir);
        const auto whole = loadTrace(ss(path));
        const std::size_t events = whole->events.size();
        const std::int64_t fromNs = at <= 1.0 ? whole->events.timeNs(static_cast<std::size_t>(at * double(events - 1)))
                                              : whole->events.timeNs(events - 1) + 1000;
        const auto window = readPeakWindow(ss(path), schema::kEventsPerChunk, 0, {}, fromNs);
        QVERIFY(window);
        // The first event at or after the time (the last event past the end), and its chunk.
        std::size_t reached = 0;
        while (reached + 1 < events && whole->events.timeNs(reached) < fromNs)
            ++reached;
        QCOMPARE(window->firstEvent, reached / schema::kEventsPerChunk * schema::kEventsPerChunk);
        const LaneDevices lanes(*whole);
        LiveBlocks live;
        for (std::size_t i = 0; i < window->firstEvent; ++i)
            live.apply(whole->events, i, i, lanes.deviceOfLane[whole->events.lane(i)]);
        QCOMPARE(window->carriedBlocks, live.size());
        for (std::size_t i = 0; i < window->readEvents; ++i)
            QCOMPARE(window->trace->events.at(window->carriedBlocks + i), whole->events.at(window->firstEvent + i));
        QVERIFY(qs(window->trace->metaValue(metakey::Window)).contains(QStringLiteral("from the time asked for")));
    }

    // A file of another format with more events than a document holds opens the same way,
    // from a native copy in the user's cache: written once, reused while the file stays the
    // same, the input untouched; its window holds the file's peak.
    void hugeNonNativeFileOpensFromANativeCopy()
    {
        QTemporaryDir dir;
        const test::ScopedCache cache;
        const QString input = dir.filePath(QStringLiteral("huge.pltxt"));
        // Beyond a document, by more than the chunks a window around the peak reads.
        QVERIFY(test::writeAllocationsText(input, (LoadBudget::kDocumentEvents + 3 * schema::kEventsPerChunk) / 2));
        const QByteArray before = [&] {
            QFile file(input);
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        }();
        const auto whole = loadTrace(ss(input));
        QVERIFY(whole->events.size() > LoadBudget::kDocumentEvents);
        const PeakReport filePeaks = findPeaks(*whole);

        const OpenedTrace opened = openTraceWindow(ss(input));
        QCOMPARE(qs(opened.windowOf), qs(nativeCopyPath(ss(input))));
        QVERIFY(QFileInfo(QString::fromStdString(opened.windowOf)).absolutePath().startsWith(cache.path()));
        QVERIFY(opened.trace->events.size() < whole->events.size());
        const PeakReport windowPeaks = findPeaks(*opened.trace);
        QCOMPARE(windowPeaks.devices[*windowPeaks.primary].allocatedBytes, filePeaks.devices[*filePeaks.primary].allocatedBytes);
        QCOMPARE(windowPeaks.devices[*windowPeaks.primary].timeNs, filePeaks.devices[*filePeaks.primary].timeNs);
        QCOMPARE(readFileOverview(opened.windowOf)->peakBytes, filePeaks.devices[*filePeaks.primary].allocatedBytes);

        // Opened again, from the copy already there (the same file, not written again: a
        // new copy is renamed into place), now its last use; from a time, the window
        // begins there.
        const auto inode = [](const std::string &path) {
            struct stat info = {};
            return ::stat(path.c_str(), &info) == 0 ? info.st_ino : ino_t(0);
        };
        const ino_t written = inode(opened.windowOf);
        const QDateTime madeAt = QFileInfo(QString::fromStdString(opened.windowOf)).lastModified();
        QFile copy(QString::fromStdString(opened.windowOf));
        QVERIFY(copy.open(QIODevice::ReadOnly) && copy.setFileTime(madeAt.addDays(-2), QFileDevice::FileModificationTime));
        copy.close();
        const std::int64_t middle = whole->events.timeNs(whole->events.size() / 2);
        const OpenedTrace later = openTraceWindow(ss(input), {}, middle);
        QCOMPARE(later.windowOf, opened.windowOf);
        QCOMPARE(inode(later.windowOf), written);
        QVERIFY(QFileInfo(QString::fromStdString(later.windowOf)).lastModified() >= madeAt);
        QVERIFY(later.trace->events.timeNs(later.trace->events.size() - 1) >= middle);
        QFile file(input);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), before);
    }
};

QTEST_GUILESS_MAIN(tst_FileSummary)
#include "tst_filesummary.moc"
