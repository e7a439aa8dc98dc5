// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/stepalignment.h"

#include <QTest>

using namespace peaklens;
using peaklens::test::stepText;

namespace {

QString printPoints(const std::vector<SeriesPoint> &points)
{
    QStringList parts;
    for (const SeriesPoint &point : points)
        parts << QStringLiteral("%1:%2").arg(point.timeNs).arg(point.bytes);
    return parts.join(QLatin1Char(' '));
}

} // namespace

class tst_StepAlignment : public QObject
{
    Q_OBJECT

private slots:
    // A rerun whose forward was twice as slow and whose backward was as fast lines up phase
    // by phase: the allocation lands in the middle of the baseline's forward, the free in
    // the middle of its backward, and the curve ends where the baseline's step ends.
    void phasesLineUp_data()
    {
        QTest::addColumn<QString>("run");
        QTest::addColumn<QString>("points");
        QTest::addRow("same speed, later start") << stepText(1000, 40, 60) << QStringLiteral("100:0 121:100 171:0 202:0");
        QTest::addRow("forward twice as slow") << stepText(0, 80, 60) << QStringLiteral("100:0 121:100 171:0 202:0");
        QTest::addRow("everything three times as fast") << stepText(0, 14, 20) << QStringLiteral("100:0 121:100 171:0 202:0");
    }

    void phasesLineUp()
    {
        QFETCH(QString, run);
        QFETCH(QString, points);
        const auto baseline = test::traceFrom(stepText(100, 40, 60));
        const auto rerun = test::traceFrom(run);
        const auto alignment = alignSteps(*rerun, *baseline, 1);
        QVERIFY(alignment);
        const TimelineSeries series = buildTimeline(*rerun, Device{}, GroupBy::Category);
        QCOMPARE(printPoints(alignedSeries(series.allocated, *alignment)), points);
    }

    // Phases that do not match one for one: only the step's ends are mapped.
    void differentPhasesMapTheStepOnly()
    {
        const auto baseline = test::traceFrom(stepText(100, 40, 60));
        const auto forwardOnly =
            test::traceFrom(QStringLiteral("t=0 begin step 1\nt=1 begin fwd:l\nt=5 alloc a 100\nt=9 end fwd:l\n"
                                           "t=10 free a\nt=10 end step 1\n"));
        const auto alignment = alignSteps(*forwardOnly, *baseline, 1);
        QVERIFY(alignment);
        QCOMPARE(alignment->fromNs, (std::vector<std::int64_t>{0, 10}));
        QCOMPARE(alignment->toNs, (std::vector<std::int64_t>{100, 202}));
        QCOMPARE(alignment->map(5), std::int64_t(151));
    }

    void aMissingStepHasNoAlignment()
    {
        const auto baseline = test::traceFrom(stepText(100, 40, 60));
        const auto rerun = test::traceFrom(stepText(0, 40, 60));
        QVERIFY(!alignSteps(*rerun, *baseline, 4));
        QVERIFY(!alignSteps(*test::traceFrom(QStringLiteral("alloc a 1\n")), *baseline, std::nullopt));
    }
};

QTEST_GUILESS_MAIN(tst_StepAlignment)
#include "tst_stepalignment.moc"
