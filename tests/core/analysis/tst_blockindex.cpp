// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/blockindex.h"
#include "core/analysis/lanedevices.h"
#include "core/analysis/liveblocks.h"
#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"
#include "testsupport.h"

#include <algorithm>
#include <numeric>

using namespace peaklens;
using peaklens::test::traceFrom;

namespace {

// Bands of the stack at t=4, category order: activation (a 300, c 50), then parameter (p
// 100), then everything else (t 20). b was freed at t=3; x lives on another device.
// Addresses name the blocks: p is 0x10, t 0x20, x 0x30.
const char *const kTrace = "t=0 alloc 0x10 100 parameter @other:net.b0.fc\n"
                           "t=1 alloc 0xa 300 activation @fwd:net.b0.fc\n"
                           "t=1 alloc 0xb 70 activation @fwd:net.b0.fc\n"
                           "t=1 alloc 0xc 50 activation @fwd:net.b1\n"
                           "t=2 alloc 0x20 20 temporary\n"
                           "t=3 free 0xb @bwd:net.b0.fc\n"
                           "t=4 alloc 0x30 5 device=cpu\n"
                           "t=5 free 0xa @bwd:net.b0.fc\n";

QString addressOf(const Trace &trace, std::optional<std::size_t> event)
{
    if (!event)
        return QStringLiteral("none");
    return QString::number(trace.events.addr(*event), 16);
}

} // namespace

class tst_BlockIndex : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void intervals()
    {
        const auto trace = traceFrom(QString::fromLatin1(kTrace));
        const BlockIndex index(*trace, Device{DeviceType::Cuda, 0});
        QCOMPARE(index.size(), std::size_t(5)); // x is on the CPU
        std::vector<std::int64_t> ends;
        for (std::size_t i = 0; i < index.size(); ++i)
            ends.push_back(index.endNs(i));
        QCOMPARE(ends, (std::vector<std::int64_t>{INT64_MAX, 5, 3, INT64_MAX, INT64_MAX}));
        QCOMPARE(index.freeEvent(0), BlockIndex::kNeverFreed);
        QCOMPARE(trace->events.timeNs(index.freeEvent(2)), std::int64_t(3));
    }

    void liveAt_data()
    {
        QTest::addColumn<qint64>("time");
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<int>("blocks");
        QTest::newRow("before anything") << qint64(-1) << qint64(0) << 0;
        QTest::newRow("at the first allocation") << qint64(0) << qint64(100) << 1;
        QTest::newRow("all three at t=1") << qint64(1) << qint64(520) << 4;
        QTest::newRow("b freed at its own time") << qint64(3) << qint64(470) << 4;
        QTest::newRow("after a's free") << qint64(5) << qint64(170) << 3;
    }
    void liveAt()
    {
        QFETCH(qint64, time);
        QFETCH(qint64, bytes);
        QFETCH(int, blocks);
        const auto trace = traceFrom(QString::fromLatin1(kTrace));
        const BlockIndex index(*trace, Device{DeviceType::Cuda, 0});
        const auto live = index.liveAllocationsAt(time);
        QCOMPARE(int(live.size()), blocks);
        std::int64_t sum = 0;
        for (std::size_t event : live)
            sum += trace->events.deltaBytes(event);
        QCOMPARE(sum, bytes);
        QVERIFY(std::is_sorted(live.begin(), live.end()));
    }

    // The live sets of a real snapshot (13k events: many chunks of blocks, most freed)
    // equal a replay of its events, block for block, at the peak and across the trace.
    void liveSetsOfARealSnapshot()
    {
        const auto trace = loadTrace(QFINDTESTDATA("../../data/real/snapshot_cs336_medium_train.pickle.gz").toStdString());
        const PeakReport peaks = findPeaks(*trace);
        QVERIFY(peaks.primary);
        const DevicePeak &peak = peaks.devices[*peaks.primary];
        const BlockIndex index(*trace, peak.device);
        std::int64_t sum = 0;
        for (std::size_t event : index.liveAllocationsAt(peak.timeNs))
            sum += trace->events.deltaBytes(event);
        QCOMPARE(sum, peak.allocatedBytes);
        const LaneDevices lanes(*trace);
        const std::size_t n = trace->events.size();
        for (std::size_t at : {n / 8, n / 4, n / 2, n * 3 / 4, n - 1}) {
            const std::int64_t t = trace->events.timeNs(at);
            LiveBlocks replayed;
            for (std::size_t i = 0; i < n && trace->events.timeNs(i) <= t; ++i) {
                if (trace->lanes[trace->events.lane(i)].device == peak.device)
                    replayed.apply(trace->events, i, i, lanes.deviceOfLane[trace->events.lane(i)]);
            }
            QCOMPARE(index.liveAllocationsAt(t), replayed.allocationIndices());
        }
    }

    void blockAtHeight_data()
    {
        QTest::addColumn<bool>("byLayer");
        QTest::addColumn<qint64>("height");
        QTest::addColumn<QString>("address");
        // By category, bands activation then parameter (listed), the rest last.
        QTest::newRow("bottom of activation") << false << qint64(0) << QStringLiteral("a");
        QTest::newRow("top of a") << false << qint64(299) << QStringLiteral("a");
        QTest::newRow("c above a") << false << qint64(300) << QStringLiteral("c");
        QTest::newRow("parameter band") << false << qint64(350) << QStringLiteral("10");
        QTest::newRow("unlisted band last") << false << qint64(460) << QStringLiteral("20");
        QTest::newRow("above the stack") << false << qint64(470) << QStringLiteral("none");
        QTest::newRow("below the axis") << false << qint64(-1) << QStringLiteral("none");
        // By layer, band net.b0.fc (p, a) then net.b1 (c), then no layer (t).
        QTest::newRow("layer: p first, oldest") << true << qint64(99) << QStringLiteral("10");
        QTest::newRow("layer: a over p") << true << qint64(100) << QStringLiteral("a");
        QTest::newRow("layer: c") << true << qint64(420) << QStringLiteral("c");
        QTest::newRow("layer: no layer last") << true << qint64(469) << QStringLiteral("20");
    }
    void blockAtHeight()
    {
        QFETCH(bool, byLayer);
        QFETCH(qint64, height);
        QFETCH(QString, address);
        const auto trace = traceFrom(QString::fromLatin1(kTrace));
        const Device cuda{DeviceType::Cuda, 0};
        const TimelineSeries series = buildTimeline(*trace, cuda, byLayer ? GroupBy::Layer : GroupBy::Category);
        const BlockIndex index(*trace, cuda);
        std::vector<std::uint32_t> bands;
        if (byLayer)
            bands = {*trace->findLayer("net.b0.fc"), *trace->findLayer("net.b1")};
        else
            bands = {std::uint32_t(Category::Activation), std::uint32_t(Category::Parameter)};
        const auto block = peaklens::blockAtHeight(*trace, index, series, bands, 4, height);
        std::optional<std::size_t> event;
        if (block)
            event = index.allocation(*block);
        const QString expected = address;
        QCOMPARE(addressOf(*trace, event), expected);
    }
};

QTEST_GUILESS_MAIN(tst_BlockIndex)
#include "tst_blockindex.moc"
