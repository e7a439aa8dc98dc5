// SPDX-License-Identifier: Apache-2.0
#include "core/report/axisticks.h"
#include "core/report/chartaxis.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace peaklens;

namespace {

QString printed(const std::vector<double> &values)
{
    QStringList parts;
    for (const double value : values)
        parts << QString::number(value, 'g', 12);
    return parts.join(QLatin1Char(' '));
}

QString printed(const std::vector<std::string> &labels)
{
    QStringList parts;
    for (const std::string &label : labels)
        parts << QString::fromStdString(label);
    return parts.join(QStringLiteral(", "));
}

// Whether `step` is 1, 2 or 5 times a power of ten.
bool isRound(double step)
{
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    for (const double round : {1.0, 2.0, 5.0, 10.0}) {
        if (std::abs(mantissa - round) < 1e-9)
            return true;
    }
    return false;
}

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
const double kInfinity = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

class tst_AxisTicks : public QObject
{
    Q_OBJECT

private slots:
    void niceTicks_data()
    {
        QTest::addColumn<double>("low");
        QTest::addColumn<double>("high");
        QTest::addColumn<int>("targetCount");
        QTest::addColumn<QString>("ticks");
        QTest::addRow("a peak of 225.9 (MiB) in about four steps") << 0.0 << 225.9 << 4 << QStringLiteral("0 50 100 150 200 250");
        QTest::addRow("a round top is the last tick") << 0.0 << 100.0 << 5 << QStringLiteral("0 20 40 60 80 100");
        QTest::addRow("twenty-five a step rounds down to twenty") << 0.0 << 100.0 << 4 << QStringLiteral("0 20 40 60 80 100");
        QTest::addRow("fractions print as decimals") << 0.0 << 1.0 << 5 << QStringLiteral("0 0.2 0.4 0.6 0.8 1");
        QTest::addRow("hundredths") << 0.1 << 0.35 << 5 << QStringLiteral("0.1 0.15 0.2 0.25 0.3 0.35");
        QTest::addRow("bounds between ticks widen to the ticks") << 0.3 << 9.7 << 5 << QStringLiteral("0 2 4 6 8 10");
        QTest::addRow("across zero") << -3.0 << 7.0 << 5 << QStringLiteral("-4 -2 0 2 4 6 8");
        QTest::addRow("reversed bounds") << 10.0 << 0.0 << 5 << QStringLiteral("0 2 4 6 8 10");
        QTest::addRow("terabytes") << 0.0 << 3e12 << 3 << QStringLiteral("0 1e+12 2e+12 3e+12");
        QTest::addRow("far from zero") << 1000000.0 << 1000010.0 << 5
                                       << QStringLiteral("1000000 1000002 1000004 1000006 1000008 1000010");
        QTest::addRow("no span: the value alone") << 5.0 << 5.0 << 4 << QStringLiteral("5");
        QTest::addRow("a target below one counts as one") << 0.0 << 7.0 << 0 << QStringLiteral("0 5 10");
        QTest::addRow("infinite bound: no ticks") << 0.0 << kInfinity << 5 << QString();
        QTest::addRow("NaN bound: no ticks") << kNaN << 1.0 << 5 << QString();
        QTest::addRow("a span wider than a double holds: no ticks") << -1.7e308 << 1.7e308 << 5 << QString();
    }
    void niceTicks()
    {
        QFETCH(double, low);
        QFETCH(double, high);
        QFETCH(int, targetCount);
        QFETCH(QString, ticks);
        QCOMPARE(printed(peaklens::niceTicks(low, high, targetCount)), ticks);
    }

    // Whatever the range, the ticks cover it at a round, even step, about as many as asked.
    void niceTicksCoverTheRange_data()
    {
        QTest::addColumn<double>("low");
        QTest::addColumn<double>("high");
        QTest::addColumn<int>("targetCount");
        const double spans[] = {1e-6, 0.37, 1.0, 3.3, 7.5, 13.0, 99.9, 1234.5, 6.02e23};
        for (const double span : spans) {
            for (const int target : {2, 4, 5, 8, 12}) {
                QTest::addRow("0 to %g, %d ticks", span, target) << 0.0 << span << target;
                QTest::addRow("%g to %g, %d ticks", span / 3, span * 2.1, target) << span / 3 << span * 2.1 << target;
            }
        }
    }
    void niceTicksCoverTheRange()
    {
        QFETCH(double, low);
        QFETCH(double, high);
        QFETCH(int, targetCount);
        const std::vector<double> ticks = peaklens::niceTicks(low, high, targetCount);
        QVERIFY(ticks.size() >= 2);
        QVERIFY(ticks.front() <= low * (1 + 1e-9));
        QVERIFY(ticks.back() >= high * (1 - 1e-9));
        const double step = ticks[1] - ticks[0];
        QVERIFY2(isRound(step), qPrintable(QString::number(step)));
        QCOMPARE(step, peaklens::niceStep(high - low, targetCount));
        for (std::size_t i = 1; i < ticks.size(); ++i)
            QVERIFY(std::abs(ticks[i] - ticks[i - 1] - step) <= step * 1e-9);
        // The nearest round step is at most 1.6 times as fine as asked (2 for 3.16), plus the
        // two intervals that widening the bounds to ticks can add.
        QVERIFY2(static_cast<double>(ticks.size() - 1) <= 1.6 * targetCount + 2, qPrintable(printed(ticks)));
        QVERIFY2(static_cast<double>(ticks.size() - 1) >= targetCount / 1.6 - 1, qPrintable(printed(ticks)));
    }

    void niceStep_data()
    {
        QTest::addColumn<double>("span");
        QTest::addColumn<int>("targetCount");
        QTest::addColumn<double>("step");
        QTest::addRow("20 a step") << 100.0 << 5 << 20.0;
        QTest::addRow("tenths") << 1.0 << 10 << 0.1;
        QTest::addRow("3 rounds to 2") << 3.0 << 1 << 2.0;
        QTest::addRow("3.2 rounds to 5") << 3.2 << 1 << 5.0;
        QTest::addRow("7 rounds to 5") << 7.0 << 1 << 5.0;
        QTest::addRow("7.5 rounds to 10") << 7.5 << 1 << 10.0;
        QTest::addRow("1.4 rounds to 1") << 1.4 << 1 << 1.0;
        QTest::addRow("no span") << 0.0 << 5 << 0.0;
        QTest::addRow("negative span") << -1.0 << 5 << 0.0;
        QTest::addRow("infinite span") << kInfinity << 5 << 0.0;
    }
    void niceStep()
    {
        QFETCH(double, span);
        QFETCH(int, targetCount);
        QFETCH(double, step);
        QCOMPARE(peaklens::niceStep(span, targetCount), step);
    }

    void bytesAxis_data()
    {
        QTest::addColumn<double>("maxBytes");
        QTest::addColumn<QString>("labels");
        QTest::addColumn<double>("end");
        QTest::addRow("MiB in fifties, not 75.30 MiB")
            << 225.9 * kMiB << QStringLiteral("0, 50 MiB, 100 MiB, 150 MiB, 200 MiB, 250 MiB") << 250 * kMiB;
        QTest::addRow("the peak of the bundled sample")
            << 273.8 * kMiB << QStringLiteral("0, 50 MiB, 100 MiB, 150 MiB, 200 MiB, 250 MiB, 300 MiB") << 300 * kMiB;
        QTest::addRow("just under a GiB reads in GiB")
            << 1023.5 * kMiB << QStringLiteral("0, 0.2 GiB, 0.4 GiB, 0.6 GiB, 0.8 GiB, 1.0 GiB") << kGiB;
        QTest::addRow("GiB with a decimal") << 2.141 * kGiB << QStringLiteral("0, 0.5 GiB, 1.0 GiB, 1.5 GiB, 2.0 GiB, 2.5 GiB")
                                            << 2.5 * kGiB;
        QTest::addRow("a few bytes in whole bytes") << 3.0 << QStringLiteral("0, 1 B, 2 B, 3 B, 4 B, 5 B") << 5.0;
        QTest::addRow("nothing allocated") << 0.0 << QStringLiteral("0, 1 B, 2 B, 3 B, 4 B, 5 B") << 5.0;
    }
    void bytesAxis()
    {
        QFETCH(double, maxBytes);
        QFETCH(QString, labels);
        QFETCH(double, end);
        const ChartAxis axis = peaklens::bytesAxis(maxBytes, 5);
        QCOMPARE(printed(axis.labels), labels);
        QCOMPARE(axis.ticks.size(), axis.labels.size());
        QCOMPARE(axis.end, end);
        QCOMPARE(axis.ticks.back(), end);
    }

    void timeAxis_data()
    {
        QTest::addColumn<double>("spanNs");
        QTest::addColumn<QString>("labels");
        QTest::addRow("seconds, ticks inside the span")
            << 1.354e9 << QStringLiteral("0, 0.2 s, 0.4 s, 0.6 s, 0.8 s, 1.0 s, 1.2 s");
        QTest::addRow("milliseconds") << 4.7e8
                                      << QStringLiteral(
                                             "0, 50 ms, 100 ms, 150 ms, 200 ms, 250 ms, 300 ms, 350 ms, 400 ms, 450 ms");
        QTest::addRow("a step of 34 ms") << 3.42e7 << QStringLiteral("0, 5 ms, 10 ms, 15 ms, 20 ms, 25 ms, 30 ms");
        QTest::addRow("microseconds") << 4000.0
                                      << QStringLiteral("0, 0.5 us, 1.0 us, 1.5 us, 2.0 us, 2.5 us, 3.0 us, 3.5 us, 4.0 us");
        QTest::addRow("one nanosecond: no tick between two") << 1.0 << QStringLiteral("0, 1 ns");
    }
    void timeAxis()
    {
        QFETCH(double, spanNs);
        QFETCH(QString, labels);
        const ChartAxis axis = peaklens::timeAxis(spanNs, 8);
        QCOMPARE(printed(axis.labels), labels);
        QCOMPARE(axis.end, spanNs);
        QVERIFY(axis.ticks.back() <= spanNs);
    }
};

QTEST_GUILESS_MAIN(tst_AxisTicks)
#include "tst_axisticks.moc"
