// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/levelofdetail.h"
#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"

using namespace peaklens;

namespace {

std::vector<SeriesPoint> series(std::initializer_list<std::pair<std::int64_t, std::int64_t>> points)
{
    std::vector<SeriesPoint> out;
    for (const auto &[time, bytes] : points)
        out.push_back({time, bytes});
    return out;
}

// "min-max@maxTime" per column, for compact comparison.
QString describe(const std::vector<ColumnRange> &columns)
{
    QStringList parts;
    for (const ColumnRange &column : columns)
        parts << QStringLiteral("%1-%2@%3").arg(column.minBytes).arg(column.maxBytes).arg(column.maxTimeNs);
    return parts.join(QLatin1Char(' '));
}

} // namespace

class tst_LevelOfDetail : public QObject
{
    Q_OBJECT

private slots:
    void reduceToColumns_data()
    {
        QTest::addColumn<qint64>("begin");
        QTest::addColumn<qint64>("end");
        QTest::addColumn<int>("columns");
        QTest::addColumn<QString>("expected");
        // Series: 0 until t=10, 5 from 10, 9 from 12, 2 from 13, 7 from 30.
        QTest::addRow("a spike narrower than a column survives")
            << qint64(0) << qint64(20) << 2 << QStringLiteral("0-0@0 2-9@12");
        QTest::addRow("values carry into empty columns") << qint64(14) << qint64(30) << 2 << QStringLiteral("2-2@14 2-2@22");
        QTest::addRow("one column holds everything") << qint64(0) << qint64(40) << 1 << QStringLiteral("0-9@12");
        QTest::addRow("a point at the column's start counts") << qint64(10) << qint64(12) << 1 << QStringLiteral("5-5@10");
        QTest::addRow("before the first point is zero") << qint64(-10) << qint64(0) << 1 << QStringLiteral("0-0@-10");
        QTest::addRow("after the last point it holds") << qint64(100) << qint64(200) << 1 << QStringLiteral("7-7@100");
        QTest::addRow("no width") << qint64(5) << qint64(5) << 3 << QString();
        QTest::addRow("no columns") << qint64(0) << qint64(10) << 0 << QString();
    }

    void reduceToColumns()
    {
        QFETCH(qint64, begin);
        QFETCH(qint64, end);
        QFETCH(int, columns);
        QFETCH(QString, expected);
        const auto points = series({{10, 5}, {12, 9}, {13, 2}, {30, 7}});
        QCOMPARE(describe(peaklens::reduceToColumns(points, begin, end, columns)), expected);
    }

    // However finely it is cut, the highest column is the series' peak.
    void thePeakIsNeverLost()
    {
        std::vector<SeriesPoint> points;
        std::int64_t value = 0, peak = 0;
        for (std::int64_t t = 0; t < 100000; ++t) {
            value += (t * 7919) % 13 - 6;
            points.push_back({t, value});
            peak = std::max(peak, value);
        }
        for (int columns : {1, 7, 640, 1920, 100000}) {
            std::int64_t highest = INT64_MIN;
            for (const ColumnRange &column : peaklens::reduceToColumns(points, 0, 100000, columns))
                highest = std::max(highest, column.maxBytes);
            QCOMPARE(highest, peak);
        }
    }

    // Reading whole blocks gives exactly the columns a point-by-point scan gives.
    void blocksGiveTheSameColumns()
    {
        std::vector<SeriesPoint> points;
        std::int64_t value = 0, time = 0;
        for (int i = 0; i < 50000; ++i) {
            time += 1 + (i * 31) % 7; // uneven spacing, some equal deltas
            value += (i * 7919) % 17 - 8;
            points.push_back({time, value});
        }
        const SeriesBlocks blocks = SeriesBlocks::build(points);
        QCOMPARE(blocks.maxBytes.size(), points.size() / SeriesBlocks::kSize);
        for (int columns : {1, 3, 97, 1000, 60000}) {
            for (auto [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, time + 10}, {time / 3, time / 2}, {-50, 700}}) {
                const auto plain = peaklens::reduceToColumns(points, begin, end, columns);
                const auto fast = peaklens::reduceToColumns(points, begin, end, columns, &blocks);
                QCOMPARE(describe(fast), describe(plain));
            }
        }
    }

    void valueAt()
    {
        const auto points = series({{10, 5}, {12, 9}});
        QCOMPARE(peaklens::valueAt(points, 9), 0);
        QCOMPARE(peaklens::valueAt(points, 10), 5);
        QCOMPARE(peaklens::valueAt(points, 11), 5);
        QCOMPARE(peaklens::valueAt(points, 500), 9);
    }

    // A stacked chart of a real Kineto trace (an H100's inference, its memory moving within
    // microseconds) at several zooms: in every column the bands add up to the allocated
    // maximum, so the chart reaches the peak wherever it is.
    void bandsReachTheTopOfEveryColumn_data()
    {
        QTest::addColumn<int>("grouping");
        QTest::addColumn<double>("zoom"); // the share of the trace shown, centred on the peak
        QTest::addColumn<int>("columns");
        for (const auto &[grouping, name] : {std::pair(GroupBy::Category, "categories"), std::pair(GroupBy::Layer, "layers")}) {
            for (const double zoom : {1.0, 0.3, 0.01, 0.0005})
                QTest::addRow("%s, %g of the trace", name, zoom) << int(grouping) << zoom << 900;
        }
    }

    void bandsReachTheTopOfEveryColumn()
    {
        QFETCH(int, grouping);
        QFETCH(double, zoom);
        QFETCH(int, columns);
        static const auto trace = loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_h100_qwen_inference.pt.trace.json.gz");
        const PeakReport peaks = findPeaks(*trace);
        const DevicePeak &peak = peaks.devices[*peaks.primary];
        const TimelineSeries timeline = buildTimeline(*trace, peak.device, GroupBy(grouping));
        const std::int64_t first = timeline.allocated.front().timeNs, last = timeline.allocated.back().timeNs;
        const auto span = std::max<std::int64_t>(1, static_cast<std::int64_t>(double(last - first) * zoom));
        const std::int64_t begin = std::max(first, peak.timeNs - span / 2);
        const SeriesBlocks blocks = SeriesBlocks::build(timeline.allocated);
        std::int64_t highest = 0;
        for (const StackedColumn &column : stackColumns(timeline, begin, begin + span, columns, &blocks)) {
            std::int64_t stacked = 0;
            for (const std::int64_t bytes : column.groupBytes)
                stacked += bytes;
            QCOMPARE(stacked, column.range.maxBytes);
            highest = std::max(highest, column.range.maxBytes);
        }
        QCOMPARE(highest, peak.allocatedBytes); // the peak lies in the shown span
    }

    // Bands stacked as listed; the rest of the groups as one band up to the column's top.
    void bandTops_data()
    {
        QTest::addColumn<QList<int>>("bands"); // -1: the rest
        QTest::addColumn<QString>("tops");     // per band, its tops in the two columns
        QTest::addRow("every group, in order") << QList<int>{0, 1, 2} << QStringLiteral("10 40|30 60|60 65");
        QTest::addRow("the largest first") << QList<int>{2, 0} << QStringLiteral("30 5|40 45");
        QTest::addRow("two groups and the rest") << QList<int>{1, 0, -1} << QStringLiteral("20 20|30 60|60 65");
        QTest::addRow("only the rest") << QList<int>{-1} << QStringLiteral("60 65");
    }
    void bandTops()
    {
        QFETCH(QList<int>, bands);
        QFETCH(QString, tops);
        // Two columns, groups of 10, 20, 30 and 40, 20, 5 bytes, tops 60 and 65.
        std::vector<StackedColumn> columns{{{0, 0, 60, 0}, {10, 20, 30}}, {{10, 0, 65, 10}, {40, 20, 5}}};
        std::vector<std::size_t> listed;
        for (const int band : bands)
            listed.push_back(band < 0 ? kRestOfGroups : static_cast<std::size_t>(band));
        QStringList printed;
        for (const auto &band : peaklens::bandTops(columns, listed))
            printed << QStringLiteral("%1 %2").arg(band[0]).arg(band[1]);
        QCOMPARE(printed.join(QLatin1Char('|')), tops);
    }
};

QTEST_GUILESS_MAIN(tst_LevelOfDetail)
#include "tst_levelofdetail.moc"
