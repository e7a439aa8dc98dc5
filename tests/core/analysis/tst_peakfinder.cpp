// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/peakfinder.h"
#include "core/trace/tracebuilder.h"
#include "testsupport.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::traceFrom;

namespace {

// "layer=bytes" for each group, largest first, e.g. "blocks.0=300 (none)=20".
QString printGroups(const Trace &trace, const std::vector<LiveGroup> &groups, bool layers)
{
    QStringList parts;
    for (const LiveGroup &group : groups) {
        QString key;
        if (layers)
            key = group.key == kNoLayer ? QStringLiteral("(none)") : qs(trace.layers[group.key].path);
        else
            key = qs(std::string(categoryName(static_cast<Category>(group.key))));
        parts << key + QLatin1Char('=') + QString::number(group.bytes);
    }
    return parts.join(QLatin1Char(' '));
}

} // namespace

class tst_PeakFinder : public QObject
{
    Q_OBJECT

private slots:
    void findsPeakAndLiveSet_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("peakBytes");
        QTest::addColumn<qint64>("peakTime");
        QTest::addColumn<QString>("byLayer");
        QTest::addColumn<QString>("byCategory");

        QTest::addRow("peak in forward, before the temporaries are freed")
            << QStringLiteral("t=10 alloc w 100 parameter\nt=20 alloc a 300 activation @fwd:l0\n"
                              "t=30 alloc tmp 50 temporary @fwd:l0\nt=40 free tmp @fwd:l0\nt=50 free a @bwd:l0\n")
            << qint64(450) << qint64(30) << QStringLiteral("l0=350 (none)=100")
            << QStringLiteral("activation=300 parameter=100 temporary=50");
        QTest::addRow("peak in backward, when gradients meet activations")
            << QStringLiteral("alloc a 300 activation @fwd:l0\nalloc b 200 activation @fwd:l1\n"
                              "alloc gb 200 gradient @bwd:l1\nfree b @bwd:l1\nalloc ga 300 gradient @bwd:l0\n"
                              "free a @bwd:l0\n")
            << qint64(800) << qint64(4) << QStringLiteral("l0=600 l1=200") << QStringLiteral("gradient=500 activation=300");
        QTest::addRow("the first time a tied peak is reached")
            << QStringLiteral("alloc a 10\nfree a\nalloc b 10\n") << qint64(10) << qint64(0) << QStringLiteral("(none)=10")
            << QStringLiteral("unknown=10");
        QTest::addRow("frees of blocks from before the trace do not hide the peak")
            << QStringLiteral("free 0x10 64 activation\nalloc a 32\n") << qint64(0) << qint64(0) << QString() << QString();
        QTest::addRow("an address reused after its free holds the new block")
            << QStringLiteral("alloc 0x10 8\nt=5 alloc 0x20 1\nt=6 free 0x10 8\nt=7 alloc 0x10 16\n") << qint64(17) << qint64(7)
            << QStringLiteral("(none)=17") << QStringLiteral("unknown=17");
    }
    void findsPeakAndLiveSet()
    {
        QFETCH(QString, text);
        QFETCH(qint64, peakBytes);
        QFETCH(qint64, peakTime);
        QFETCH(QString, byLayer);
        QFETCH(QString, byCategory);
        const auto trace = traceFrom(text);
        const PeakReport report = findPeaks(*trace);
        QCOMPARE(report.devices.size(), std::size_t(1));
        QCOMPARE(report.devices[0].allocatedBytes, peakBytes);
        if (peakBytes == 0) {
            QVERIFY(!report.primary);
            QVERIFY(!report.liveAtPeak);
            return;
        }
        QCOMPARE(report.devices[0].timeNs, peakTime);
        QVERIFY(report.liveAtPeak);
        QCOMPARE(printGroups(*trace, report.liveAtPeak->byLayer, true), byLayer);
        QCOMPARE(printGroups(*trace, report.liveAtPeak->byCategory, false), byCategory);
    }

    void aBlockNeverFreedIsReplacedAtItsAddress()
    {
        // Trace text refuses this; importers meet it when a free was lost.
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{});
        builder.addEvent(MemoryEvent{0, 8, 0x10, lane});
        builder.addEvent(MemoryEvent{1, 16, 0x10, lane});
        builder.addEvent(MemoryEvent{2, 1, 0x20, lane});
        const auto trace = builder.finish();
        const LiveSet live = liveSetAfter(*trace, Device{}, 2);
        QCOMPARE(live.bytes, qint64(17));
        QCOMPARE(live.allocations, (std::vector<std::size_t>{1, 2}));
    }

    void eachDeviceHasItsOwnPeak()
    {
        const auto trace = traceFrom(
            QStringLiteral("alloc a 100 device=cuda:0\nalloc b 500 device=cpu\nfree b device=cpu\nalloc c 200 device=cuda:1\n"
                           "alloc d 50 device=cuda:0\nfree 0x1 1 device=cuda:1\n"));
        const PeakReport report = findPeaks(*trace);
        QCOMPARE(report.devices.size(), std::size_t(3));
        QCOMPARE(report.devices[0].device.toString(), std::string("cpu"));
        QCOMPARE(report.devices[0].allocatedBytes, qint64(500));
        QCOMPARE(report.devices[1].allocatedBytes, qint64(150));
        QCOMPARE(report.devices[2].allocatedBytes, qint64(200));
        QCOMPARE(*report.primary, std::size_t(0)); // the highest peak
        QCOMPARE(report.liveAtPeak->bytes, qint64(500));
        QCOMPARE(report.liveAtPeak->allocations.size(), std::size_t(1));
    }

    void reservedFiguresComeFromSegments()
    {
        const auto trace =
            traceFrom(QStringLiteral("t=0 reserve s1 1000\nt=1 alloc a 600\nt=2 reserve s2 1000\nt=3 alloc b 900\nt=4 free a\n"
                                     "t=5 reserve s3 4000\nt=6 unreserve s3\n"));
        const DevicePeak peak = findPeaks(*trace).devices.at(0);
        QCOMPARE(peak.allocatedBytes, qint64(1500));
        QCOMPARE(*peak.reservedBytes, qint64(6000));
        QCOMPARE(*peak.reservedTimeNs, qint64(5));
        QCOMPARE(*peak.reservedAtPeakBytes, qint64(2000));
        QVERIFY(!findPeaks(*traceFrom(QStringLiteral("alloc a 1\n"))).devices.at(0).reservedBytes);
    }

    void liveSetAtAnyTime_data()
    {
        QTest::addColumn<qint64>("time");
        QTest::addColumn<qint64>("bytes");
        QTest::addRow("before anything") << qint64(-1) << qint64(0);
        QTest::addRow("after the first allocation") << qint64(10) << qint64(100);
        QTest::addRow("between events") << qint64(25) << qint64(300);
        QTest::addRow("after the free") << qint64(30) << qint64(200);
    }
    void liveSetAtAnyTime()
    {
        QFETCH(qint64, time);
        QFETCH(qint64, bytes);
        const auto trace = traceFrom(QStringLiteral("t=10 alloc a 100\nt=20 alloc b 200\nt=30 free a\n"));
        QCOMPARE(liveSetAt(*trace, Device{}, time).bytes, bytes);
    }
};

QTEST_GUILESS_MAIN(tst_PeakFinder)
#include "tst_peakfinder.moc"
