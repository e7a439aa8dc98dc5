// SPDX-License-Identifier: Apache-2.0
#include "core/plan/steptimecomparison.h"

#include <QTest>

using namespace peaklens;

using Times = std::vector<double>;
Q_DECLARE_METATYPE(Times)

class tst_StepTimeComparison : public QObject
{
    Q_OBJECT

private slots:
    void spread_data()
    {
        QTest::addColumn<Times>("times");
        QTest::addColumn<double>("median");
        QTest::addColumn<double>("min");
        QTest::addColumn<double>("max");
        QTest::addRow("none") << Times{} << 0.0 << 0.0 << 0.0;
        QTest::addRow("one") << Times{7} << 7.0 << 7.0 << 7.0;
        QTest::addRow("odd count, unsorted") << Times{12, 10, 30} << 12.0 << 10.0 << 30.0;
        QTest::addRow("even count: the middle two's mean") << Times{10, 40, 11, 13} << 12.0 << 10.0 << 40.0;
    }
    void spread()
    {
        QFETCH(Times, times);
        QFETCH(double, median);
        QFETCH(double, min);
        QFETCH(double, max);
        const TimingSpread spread = spreadOf(times);
        QCOMPARE(spread.medianMs, median);
        QCOMPARE(spread.minMs, min);
        QCOMPARE(spread.maxMs, max);
        QCOMPARE(spread.samples, times.size());
    }

    void compare_data()
    {
        QTest::addColumn<Times>("baseline");
        QTest::addColumn<Times>("run");
        QTest::addColumn<bool>("paired");
        QTest::addColumn<double>("change");
        QTest::addColumn<double>("low");
        QTest::addColumn<double>("high");
        QTest::addColumn<bool>("withinNoise");
        QTest::addRow("identical samples") << Times{10, 11, 12, 10} << Times{10, 11, 12, 10} << true << 0.0 << 0.0 << 0.0 << true;
        QTest::addRow("a clear 2x slowdown")
            << Times{10, 11, 12, 10} << Times{20, 22, 24, 20} << true << 100.0 << 100.0 << 100.0 << false;
        QTest::addRow("half the time") << Times{10, 20} << Times{5, 10} << true << -50.0 << -50.0 << -50.0 << false;
        // +10 %, -10 %, +20 %, -20 %: the changes straddle zero.
        QTest::addRow("overlapping noise") << Times{10, 10, 10, 10} << Times{11, 9, 12, 8} << true << 0.0 << -20.0 << 20.0
                                           << true;
        // The machine slows down for both halves of a pair: pairing keeps the change at +10 %,
        // where the medians alone (12 against 13.2) would say the same but the unpaired range
        // (run 11..15.4 against 12) would straddle zero.
        QTest::addRow("drift cancels in pairs")
            << Times{10, 12, 14} << Times{11, 13.2, 15.4} << true << 10.0 << 10.0 << 10.0 << false;
        QTest::addRow("unpaired sizes: medians, the run's range")
            << Times{10, 10, 10} << Times{12, 15} << false << 35.0 << 20.0 << 50.0 << false;
        QTest::addRow("unpaired, straddling the baseline")
            << Times{10} << Times{8, 10, 13} << false << 0.0 << -20.0 << 30.0 << true;
        QTest::addRow("a pair without baseline time is left out")
            << Times{0, 10} << Times{5, 11} << true << 10.0 << 10.0 << 10.0 << false;
    }
    void compare()
    {
        QFETCH(Times, baseline);
        QFETCH(Times, run);
        QFETCH(bool, paired);
        QFETCH(double, change);
        QFETCH(double, low);
        QFETCH(double, high);
        QFETCH(bool, withinNoise);
        const auto comparison = compareStepTimes(baseline, run);
        QVERIFY(comparison);
        QCOMPARE(comparison->paired, paired);
        QVERIFY2(qAbs(comparison->changePercent - change) < 1e-9, qPrintable(QString::number(comparison->changePercent)));
        QVERIFY2(qAbs(comparison->lowPercent - low) < 1e-9, qPrintable(QString::number(comparison->lowPercent)));
        QVERIFY2(qAbs(comparison->highPercent - high) < 1e-9, qPrintable(QString::number(comparison->highPercent)));
        QCOMPARE(comparison->withinNoise(), withinNoise);
        QCOMPARE(comparison->baseline.samples, baseline.size());
        QCOMPARE(comparison->run.samples, run.size());
    }

    void nothingToCompare_data()
    {
        QTest::addColumn<Times>("baseline");
        QTest::addColumn<Times>("run");
        QTest::addRow("no baseline") << Times{} << Times{10, 11};
        QTest::addRow("no run") << Times{10} << Times{};
        QTest::addRow("paired, baseline without time") << Times{0, 0} << Times{10, 11};
        QTest::addRow("unpaired, baseline without time") << Times{0} << Times{10, 11};
    }
    void nothingToCompare()
    {
        QFETCH(Times, baseline);
        QFETCH(Times, run);
        QVERIFY(!compareStepTimes(baseline, run));
    }
};

QTEST_GUILESS_MAIN(tst_StepTimeComparison)
#include "tst_steptimecomparison.moc"
