// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/levelofdetail.h"
#include "core/analysis/poolfigures.h"
#include "core/analysis/timelineseries.h"
#include "core/analysis/tracesummary.h"
#include "core/import/traceloader.h"

#include <set>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;
using peaklens::test::traceFrom;

class tst_PoolFigures : public QObject
{
    Q_OBJECT

private slots:
    // Real files (tests/data/real/README.md): a recording of an MLP step on the default
    // stream, a matrix product on a side stream, a CUDA graph captured into its private
    // pool and tensors made in a torch.cuda.MemPool; and a Megatron/vLLM Qwen2 worker's
    // allocator state (volcengine/verl), its KV cache in a MemPool. Each pool's figures at
    // the trace's end are the dump's, as the file's own segments total them (Python: per
    // segment_pool_id, the sums of total_size and of the requested_size of active blocks).
    void realSnapshotsPoolsAreTheirSegments_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("pools"); // "NAME RESERVED ALLOCATED", default pool first
        QTest::addColumn<int>("streams");
        QTest::addRow("pools, streams and a graph")
            << QStringLiteral("snapshot_h200_pools_streams_graph.pickle.gz")
            << QStringList{QStringLiteral("default 176160768 153251856"), QStringLiteral("MemPool 1 4194304 3145728"),
                           QStringLiteral("graph pool 1 35651584 34603008")}
            << 4;
        QTest::addRow("a worker's state, its KV cache in a MemPool")
            << QStringLiteral("snapshot_state_only_verl_qwen2.pickle.gz")
            << QStringList{QStringLiteral("default 3810525184 3215037264"), QStringLiteral("MemPool 1 585105408 498271552"),
                           QStringLiteral("MemPool 2 21793603584 21770305536")}
            << 1;
    }
    void realSnapshotsPoolsAreTheirSegments()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, pools);
        QFETCH(int, streams);
        const auto trace = loadTrace(ss(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + file));
        const TraceSummary summary = summarize(*trace);
        const DevicePeak &peak = summary.peak.devices.at(*summary.peak.primary);
        QStringList got;
        std::int64_t atPeak = 0;
        for (const PoolFigures &pool : poolFigures(*trace, peak.device, peak.eventIndex)) {
            got << QStringLiteral("%1 %2 %3").arg(qs(pool.pool.toString())).arg(pool.reservedBytes).arg(pool.allocatedBytes);
            QVERIFY(pool.freeInSegmentsBytes() >= 0);
            QVERIFY(pool.highestReservedBytes >= pool.reservedBytes);
            atPeak += pool.allocatedAtPeakBytes;
        }
        QCOMPARE(got, pools);
        QCOMPARE(atPeak, peak.allocatedBytes);
        QVERIFY(hasPrivatePools(*trace));
        std::set<std::uint64_t> seen;
        for (const Lane &lane : trace->lanes)
            seen.insert(lane.stream);
        QCOMPARE(int(seen.size()), streams);

        // The timeline's bands by pool end where the segments do: each pool's reserved line
        // and band at the trace's end are its figures.
        QVERIFY(!trace->events.empty());
        const std::int64_t end = trace->events.timeNs(trace->events.size() - 1);
        const TimelineSeries byPool = buildTimeline(*trace, peak.device, GroupBy::Pool);
        QVERIFY(groupsLanes(*trace, peak.device, GroupBy::Pool));
        QStringList drawn;
        for (const ReservedGroup &reserved : byPool.reservedGroups) {
            const auto band = std::find_if(byPool.groups.begin(), byPool.groups.end(),
                                           [&](const GroupSeries &g) { return g.key == reserved.key; });
            QVERIFY(band != byPool.groups.end());
            QCOMPARE(reserved.label, band->label);
            QCOMPARE(reserved.label, poolLabel(trace->lanes[reserved.key].pool));
            drawn << QStringLiteral("%1 %2 %3")
                         .arg(qs(trace->lanes[reserved.key].pool.toString()))
                         .arg(valueAt(reserved.points, INT64_MAX))
                         .arg(valueAt(band->points, end));
        }
        drawn.sort();
        QStringList sorted = pools;
        sorted.sort();
        QCOMPARE(drawn, sorted);

        // By stream, the bands and reserved lines add up to the device's totals at every step.
        const TimelineSeries byStream = regroupTimeline(*trace, byPool, GroupBy::Stream);
        for (const SeriesPoint &point : byPool.allocated) {
            std::int64_t bands = 0;
            for (const GroupSeries &group : byStream.groups)
                bands += valueAt(group.points, point.timeNs);
            QCOMPARE(bands, point.bytes);
        }
        for (const SeriesPoint &point : byPool.reserved) {
            std::int64_t lines = 0;
            for (const ReservedGroup &group : byStream.reservedGroups)
                lines += valueAt(group.points, point.timeNs);
            QCOMPARE(lines, point.bytes);
        }
    }

    // A trace without pools has the default one alone; one that names them keeps each
    // block and segment in its lane's pool.
    void poolsFollowTheirLanes()
    {
        const auto plain = traceFrom(QStringLiteral("reserve s 2MiB\nalloc a 1MiB\n"));
        QVERIFY(!hasPrivatePools(*plain));
        const std::vector<PoolFigures> one = poolFigures(*plain, Device{}, std::nullopt);
        QCOMPARE(one.size(), std::size_t(1));
        QCOMPARE(one[0], (PoolFigures{MemoryPool{}, 2 << 20, 1 << 20, 2 << 20, 0}));

        const auto pooled = traceFrom(QStringLiteral("reserve s 2MiB\nreserve g 4MiB pool=1,0\nalloc a 1MiB pool=1,0\n"
                                                     "alloc b 512KiB\nfree a\nunreserve g\n"));
        const std::vector<PoolFigures> two = poolFigures(*pooled, Device{}, std::size_t(1));
        QCOMPARE(two.size(), std::size_t(2));
        QCOMPARE(two[0], (PoolFigures{MemoryPool{}, 2 << 20, 512 << 10, 2 << 20, 512 << 10}));
        QCOMPARE(two[1], (PoolFigures{MemoryPool{1, 0}, 0, 0, 4 << 20, 1 << 20}));
    }
};

QTEST_GUILESS_MAIN(tst_PoolFigures)
#include "tst_poolfigures.moc"
