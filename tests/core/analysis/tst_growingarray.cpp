// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/growingarray.h"
#include "core/analysis/sharedpoints.h"

#include <QTest>

using namespace peaklens;

class tst_GrowingArray : public QObject
{
    Q_OBJECT

private slots:
    void copiesShareAndKeepWhatTheyHeld_data()
    {
        QTest::addColumn<int>("before"); // elements when the copy is made
        QTest::addColumn<int>("after");  // appended to the original since
        QTest::newRow("empty, then some") << 0 << 5;
        QTest::newRow("within the first buffer") << 3 << 4;
        QTest::newRow("at a full buffer") << 16 << 1;
        QTest::newRow("across several moves") << 20 << 1000;
    }

    // A copy holds the elements it was made with while the original grows, in place or
    // moved to a larger buffer; the original reads on as if no copy had been made.
    void copiesShareAndKeepWhatTheyHeld()
    {
        QFETCH(int, before);
        QFETCH(int, after);
        GrowingArray<int> original;
        for (int i = 0; i < before; ++i)
            original.push_back(i);
        const GrowingArray<int> copy = original;
        QCOMPARE(copy.size(), std::size_t(before));
        if (before > 0)
            QCOMPARE(copy.data(), original.data()); // shared, not copied
        for (int i = 0; i < after; ++i)
            original.push_back(1000 + i);
        QCOMPARE(copy.size(), std::size_t(before));
        for (int i = 0; i < before; ++i)
            QCOMPARE(copy[std::size_t(i)], i);
        QCOMPARE(original.size(), std::size_t(before + after));
        for (int i = 0; i < after; ++i)
            QCOMPARE(original[std::size_t(before + i)], 1000 + i);

        // Appending to the copy moves it to a buffer of its own.
        GrowingArray<int> grown = copy;
        grown.push_back(-1);
        QCOMPARE(grown.size(), std::size_t(before + 1));
        QCOMPARE(grown.back(), -1);
        QCOMPARE(original.size(), std::size_t(before + after));
        if (after > 0)
            QCOMPARE(original[std::size_t(before)], 1000);
    }

    // A point at the time of the last one replaces it, unless a copy holds that one.
    void pointAtTheSameTimeReplacesOnlyWhatNoCopyHolds()
    {
        SharedPoints points;
        points.append(10, 1);
        points.append(10, 2);
        QCOMPARE(points.size(), std::size_t(1));
        QCOMPARE(points.back().bytes, 2);
        const SharedPoints handed = points;
        points.append(10, 3);
        QCOMPARE(handed.size(), std::size_t(1));
        QCOMPARE(handed.back().bytes, 2);
        QCOMPARE(points.size(), std::size_t(2));
        QCOMPARE(points.back(), (SeriesPoint{10, 3}));
        points.append(10, 4); // the new one is not held: it is replaced
        QCOMPARE(points.size(), std::size_t(2));
        QCOMPARE(points.back().bytes, 4);
    }
};

QTEST_GUILESS_MAIN(tst_GrowingArray)
#include "tst_growingarray.moc"
