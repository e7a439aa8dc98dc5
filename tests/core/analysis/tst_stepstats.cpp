// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/stepstats.h"
#include "testsupport.h"

using namespace peaklens;
using peaklens::test::traceFrom;

class tst_StepStats : public QObject
{
    Q_OBJECT

private slots:
    void perStepPeaks()
    {
        const auto trace = traceFrom(QStringLiteral(
            "t=0 alloc w 1000 parameter\n"
            "t=10 begin step 1\nt=11 alloc a 500 @fwd:l\nt=12 alloc g 100 @bwd:l\nt=13 free a @bwd:l\nt=20 end step 1\n"
            "t=25 alloc between 7\n"
            "t=30 begin step 2\nt=31 alloc b 50 @fwd:l\nt=32 free b @bwd:l\nt=40 end step 2\n"
            "t=50 begin step 3\nt=60 end step 3\n"));
        const auto stats = computeStepStats(*trace, Device{});
        QCOMPARE(stats.size(), std::size_t(3));

        QCOMPARE(stats[0].number, qint64(1));
        QCOMPARE(stats[0].durationNs(), qint64(10));
        QCOMPARE(stats[0].startBytes, qint64(1000));
        QCOMPARE(stats[0].peakAllocatedBytes, qint64(1600));
        QCOMPARE(stats[0].peakTimeNs, qint64(12));
        QCOMPARE(stats[0].peakPhase, Phase::Backward);
        QCOMPARE(stats[0].allocatedBytes, qint64(600));
        QCOMPARE(stats[0].allocations, qint64(2));

        QCOMPARE(stats[1].startBytes, qint64(1107));
        QCOMPARE(stats[1].peakAllocatedBytes, qint64(1157));
        QCOMPARE(stats[1].peakPhase, Phase::Forward);

        // A step without events still reports what was live through it.
        QCOMPARE(stats[2].startBytes, qint64(1107));
        QCOMPARE(stats[2].peakAllocatedBytes, qint64(1107));
        QCOMPARE(stats[2].allocations, qint64(0));
    }

    void otherDevicesDoNotCount()
    {
        const auto trace = traceFrom(QStringLiteral("begin step 1\nalloc a 10 device=cpu\nalloc b 3\nend step 1\n"));
        QCOMPARE(computeStepStats(*trace, Device{}).at(0).peakAllocatedBytes, qint64(3));
        QCOMPARE(computeStepStats(*trace, *Device::parse("cpu")).at(0).peakAllocatedBytes, qint64(10));
    }
};

QTEST_GUILESS_MAIN(tst_StepStats)
#include "tst_stepstats.moc"
