// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/packedseries.h"

#include <QTest>

#include <algorithm>
#include <limits>

using namespace peaklens;

namespace {

std::vector<SeriesPoint> pointsOf(int count, std::int64_t timeStep, std::int64_t bytesStep)
{
    std::vector<SeriesPoint> points;
    for (int i = 0; i < count; ++i)
        points.push_back({i * timeStep, (i % 3 == 2 ? -1 : 1) * i * bytesStep});
    return points;
}

// The value at a time, read from the plain points: the last at or before it, 0 before any.
std::int64_t plainValueAt(const std::vector<SeriesPoint> &points, std::int64_t timeNs)
{
    std::int64_t value = 0;
    for (const SeriesPoint &point : points) {
        if (point.timeNs > timeNs)
            break;
        value = point.bytes;
    }
    return value;
}

} // namespace

class tst_PackedSeries : public QObject
{
    Q_OBJECT

private slots:
    void keepsEveryPoint_data()
    {
        QTest::addColumn<std::vector<SeriesPoint>>("points");
        constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
        constexpr auto highest = std::numeric_limits<std::int64_t>::max();
        QTest::addRow("empty") << std::vector<SeriesPoint>();
        QTest::addRow("one point") << std::vector<SeriesPoint>{{5, 100}};
        QTest::addRow("one block less one") << pointsOf(PackedSeries::kBlockSize - 1, 100, 4096);
        QTest::addRow("one block") << pointsOf(PackedSeries::kBlockSize, 100, 4096);
        QTest::addRow("one block and one") << pointsOf(PackedSeries::kBlockSize + 1, 100, 4096);
        QTest::addRow("many blocks, big changes") << pointsOf(1000, 123456789, 1 << 30);
        QTest::addRow("negative times and bytes") << std::vector<SeriesPoint>{{-50, -7}, {-3, 0}, {0, -1}, {9, 12}};
        QTest::addRow("the extremes of 64 bits")
            << std::vector<SeriesPoint>{{lowest, highest}, {0, lowest}, {1, highest}, {highest - 1, 0}, {highest, lowest}};
    }
    void keepsEveryPoint()
    {
        QFETCH(std::vector<SeriesPoint>, points);
        PackedSeries packed;
        for (const SeriesPoint &point : points)
            packed.push_back(point);
        QCOMPARE(packed.size(), points.size());
        QCOMPARE(packed.empty(), points.empty());
        QVERIFY(packed.toVector() == points);
        if (!points.empty())
            QVERIFY(packed.back() == points.back());
    }

    void valueAtIsTheLastPointAtOrBefore_data()
    {
        QTest::addColumn<std::vector<SeriesPoint>>("points");
        QTest::addRow("empty") << std::vector<SeriesPoint>();
        QTest::addRow("one point") << std::vector<SeriesPoint>{{5, 100}};
        QTest::addRow("one block and one") << pointsOf(PackedSeries::kBlockSize + 1, 10, 3);
        QTest::addRow("many blocks") << pointsOf(700, 7, 1000);
    }
    void valueAtIsTheLastPointAtOrBefore()
    {
        QFETCH(std::vector<SeriesPoint>, points);
        PackedSeries packed;
        for (const SeriesPoint &point : points)
            packed.push_back(point);
        std::vector<std::int64_t> times = {std::numeric_limits<std::int64_t>::min(), -1, 0, 1'000'000};
        for (const SeriesPoint &point : points)
            times.insert(times.end(), {point.timeNs - 1, point.timeNs, point.timeNs + 1});
        for (const std::int64_t t : times)
            QCOMPARE(valueAt(packed, t), plainValueAt(points, t));
    }

    // The point of packing: a training-shaped series takes a few bytes a point, not 16.
    void takesFewBytesAPoint()
    {
        PackedSeries packed;
        std::int64_t bytes = 0;
        for (int i = 0; i < 100000; ++i) {
            bytes += (i % 2 ? -1 : 1) * (std::int64_t(1) << (12 + i % 9));
            packed.push_back({std::int64_t(i) * 1500, bytes});
        }
        QVERIFY2(packed.storedBytes() < 100000 * 8, qPrintable(QString::number(packed.storedBytes())));
    }
};

QTEST_GUILESS_MAIN(tst_PackedSeries)
#include "tst_packedseries.moc"
