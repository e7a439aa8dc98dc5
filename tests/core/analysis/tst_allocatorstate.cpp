// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/allocatorstate.h"
#include "core/analysis/levelofdetail.h"
#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"
#include "core/trace/tracebuilder.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;
using peaklens::test::traceFrom;

namespace {

constexpr qint64 MiB = 1 << 20;
const Device kCuda0{DeviceType::Cuda, 0};

QString dataPath(const QString &name)
{
    return QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/") + name;
}

// Bytes in MiB when whole, else in bytes with a "B".
QString size(std::int64_t bytes)
{
    return bytes % MiB == 0 ? QString::number(bytes / MiB) : QString::number(bytes) + QLatin1Char('B');
}

// "0x10000000 20: blocks 0+4 6+2; free 4+2 8+12": offsets from the segment's start, in MiB.
QString printSegments(const AllocatorState &state)
{
    QStringList lines;
    for (const AllocatorSegment &segment : state.segments) {
        QStringList blocks, runs;
        for (const AllocatorBlock &block : segment.blocks)
            blocks << size(static_cast<std::int64_t>(block.addr - segment.addr)) + QLatin1Char('+') + size(block.bytes);
        for (const FreeRun &run : segment.freeRuns)
            runs << size(static_cast<std::int64_t>(run.addr - segment.addr)) + QLatin1Char('+') + size(run.bytes);
        lines << QStringLiteral("0x%1 %2: blocks %3; free %4")
                     .arg(QString::number(segment.addr, 16), size(segment.bytes), blocks.join(QLatin1Char(' ')),
                          runs.join(QLatin1Char(' ')));
    }
    return lines.join(QLatin1Char('\n'));
}

QString printTotals(const AllocatorState &state)
{
    return QStringLiteral("reserved %1 allocated %2 free %3 largest %4 outside %5 unplaced %6")
        .arg(size(state.reservedBytes), size(state.allocatedBytes), size(state.freeBytes),
             state.largestFreeBytes ? size(*state.largestFreeBytes) : QStringLiteral("-"), size(state.outsideBytes),
             size(state.unplacedReservedBytes));
}

// The series' known largest free block where it changes, and its last point: what
// largestFreeCurve gives without keeping the series.
std::vector<SeriesPoint> changesOfLargestFree(const AllocatorSeries &series)
{
    std::vector<SeriesPoint> curve;
    for (const AllocatorPoint &point : series.points) {
        if (point.largestFreeBytes && (curve.empty() || curve.back().bytes != *point.largestFreeBytes))
            curve.push_back({point.timeNs, *point.largestFreeBytes});
    }
    const auto last = std::find_if(series.points.rbegin(), series.points.rend(),
                                   [](const AllocatorPoint &point) { return point.largestFreeBytes.has_value(); });
    if (last != series.points.rend() && curve.back().timeNs != last->timeNs)
        curve.push_back({last->timeNs, *last->largestFreeBytes});
    return curve;
}

QString printSeries(const AllocatorSeries &series)
{
    QStringList points;
    for (const AllocatorPoint &point : series.points)
        points << QStringLiteral("%1:%2/%3/%4/%5")
                      .arg(point.timeNs)
                      .arg(size(point.reservedBytes), size(point.allocatedBytes), size(point.freeBytes),
                           point.largestFreeBytes ? size(*point.largestFreeBytes) : QStringLiteral("-"));
    return points.join(QLatin1Char(' '));
}

// Two 20 MiB segments. A holds blocks at 0, 6 and 12 MiB (4, 2, 4 MiB): free runs of 2, 4
// and 4 MiB. B holds 8 MiB at 2 MiB: free runs of 2 and 10 MiB. 40 reserved, 18
// allocated, 22 free, the largest free run 10.
const char *const kTwoSegments = "t=0 reserve 0x10000000 20MiB\n"
                                 "t=0 reserve 0x20000000 20MiB stream=7\n"
                                 "t=1 alloc 0x10000000 4MiB\n"
                                 "t=2 alloc 0x10600000 2MiB\n"
                                 "t=3 alloc 0x10c00000 4MiB\n"
                                 "t=4 alloc 0x20200000 8MiB stream=7\n";

// A block of 14 MiB at the start of one 20 MiB map and a second 20 MiB map right after
// it: free 6 + 20 MiB, one run of 26 MiB if the maps are one expandable segment.
const char *const kAdjacentMaps = "t=0 reserve 0x10000000 20MiB\n"
                                  "t=1 alloc 0x10000000 14MiB\n"
                                  "t=2 reserve 0x11400000 20MiB\n";

} // namespace

class tst_AllocatorState : public QObject
{
    Q_OBJECT

private slots:
    void segmentsHoldTheirBlocksAndFreeRuns()
    {
        const auto trace = traceFrom(QString::fromUtf8(kTwoSegments));
        const AllocatorState state = allocatorStateAt(*trace, kCuda0, 10);
        QCOMPARE(state.layout, ReservedLayout::Segments);
        QVERIFY(state.layoutKnown());
        QCOMPARE(printSegments(state), QStringLiteral("0x10000000 20: blocks 0+4 6+2 12+4; free 4+2 8+4 16+4\n"
                                                      "0x20000000 20: blocks 2+8; free 0+2 10+10"));
        QCOMPARE(printTotals(state), QStringLiteral("reserved 40 allocated 18 free 22 largest 10 outside 0 unplaced 0"));
        QCOMPARE(state.segments[0].allocatedBytes, 10 * MiB);
        QCOMPARE(state.segments[0].freeBytes, 10 * MiB);
        QCOMPARE(state.segments[0].largestFreeBytes, 4 * MiB);
        QCOMPARE(state.segments[1].largestFreeBytes, 10 * MiB);
        QCOMPARE(trace->lanes[state.segments[1].lane].stream, std::uint64_t(7));
        // The block keeps its allocating event, for its layer and stack.
        QCOMPARE(trace->events.addr(state.segments[1].blocks[0].event), std::uint64_t(0x20200000));
        // Before the blocks, the segments are whole free runs.
        QCOMPARE(printTotals(allocatorStateAt(*trace, kCuda0, 0)),
                 QStringLiteral("reserved 40 allocated 0 free 40 largest 20 outside 0 unplaced 0"));
    }

    void unusableShareCountsRunsTooSmallForTheRequest_data()
    {
        QTest::addColumn<qint64>("request");
        QTest::addColumn<double>("share");
        // Free runs: 2, 4, 4 MiB in A; 2, 10 MiB in B; 40 MiB reserved.
        QTest::addRow("1 MiB fits every run") << 1 * MiB << 0.0;
        QTest::addRow("2 MiB fits a run of exactly 2 MiB") << 2 * MiB << 0.0;
        QTest::addRow("3 MiB: both 2 MiB runs are unusable") << 3 * MiB << 4.0 / 40;
        QTest::addRow("5 MiB: only the 10 MiB run serves") << 5 * MiB << 12.0 / 40;
        QTest::addRow("10 MiB still fits the largest") << 10 * MiB << 12.0 / 40;
        QTest::addRow("11 MiB: no run serves, 22 MiB free") << 11 * MiB << 22.0 / 40;
    }

    void unusableShareCountsRunsTooSmallForTheRequest()
    {
        QFETCH(qint64, request);
        QFETCH(double, share);
        const auto trace = traceFrom(QString::fromUtf8(kTwoSegments));
        const auto unusable = allocatorStateAt(*trace, kCuda0, 10).unusableShare(request);
        QVERIFY(unusable);
        QCOMPARE(*unusable, share);
    }

    void adjacentMapsMergeOnlyWhenExpandable_data()
    {
        QTest::addColumn<bool>("expandable");
        QTest::addColumn<QString>("segments");
        QTest::addColumn<qint64>("largest");
        QTest::addColumn<double>("unusableFor24MiB");
        QTest::addRow("expandable: one segment, one run across the seam")
            << true << QStringLiteral("0x10000000 40: blocks 0+14; free 14+26") << 26 * MiB << 0.0;
        QTest::addRow("plain segments stay apart even when adjacent")
            << false << QStringLiteral("0x10000000 20: blocks 0+14; free 14+6\n0x11400000 20: blocks ; free 0+20") << 20 * MiB
            << 26.0 / 40;
    }

    void adjacentMapsMergeOnlyWhenExpandable()
    {
        QFETCH(bool, expandable);
        QFETCH(QString, segments);
        QFETCH(qint64, largest);
        QFETCH(double, unusableFor24MiB);
        const QString meta = QStringLiteral("meta allocator.expandable_segments ")
                             + (expandable ? QStringLiteral("true\n") : QStringLiteral("false\n"));
        const auto trace = traceFrom(meta + QString::fromUtf8(kAdjacentMaps));
        const AllocatorState state = allocatorStateAt(*trace, kCuda0, 10);
        QCOMPARE(state.expandableSegments, expandable);
        QCOMPARE(printSegments(state), segments);
        QCOMPARE(state.largestFreeBytes, std::optional<std::int64_t>(largest));
        QCOMPARE(state.freeBytes, 26 * MiB);
        QCOMPARE(*state.unusableShare(24 * MiB), unusableFor24MiB);
    }

    void unmappingPartOfAnExpandableSegmentSplitsIt()
    {
        const auto trace =
            traceFrom(QStringLiteral("meta allocator.expandable_segments true\n") + QString::fromUtf8(kAdjacentMaps)
                      + QStringLiteral("t=3 alloc 0x11e00000 2MiB\n"     // at 30 MiB
                                       "t=4 unreserve 0x11400000 8MiB\n" // 20..28 MiB
                                       "t=5 reserve 0x11400000 8MiB\n"));
        QCOMPARE(printSegments(allocatorStateAt(*trace, kCuda0, 4)),
                 QStringLiteral("0x10000000 20: blocks 0+14; free 14+6\n0x11c00000 12: blocks 2+2; free 0+2 4+8"));
        // Mapped again, the pages rejoin both sides into one segment.
        QCOMPARE(printSegments(allocatorStateAt(*trace, kCuda0, 5)),
                 QStringLiteral("0x10000000 40: blocks 0+14 30+2; free 14+16 32+8"));
    }

    void blocksOutsideEverySegmentAreCountedApart()
    {
        // Built as an importer would: a block at an address no segment covers.
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{kCuda0, 0});
        builder.addReserved(ReservedEvent{0, 20 * MiB, 0x10000000, lane});
        builder.addEvent(MemoryEvent{1, 3 * MiB, 0x50000000, lane});
        builder.addEvent(MemoryEvent{2, 4 * MiB, 0x10000000, lane});
        // Reserved memory without an address, like a snapshot's segments from before its trace.
        builder.addReserved(ReservedEvent{3, 10 * MiB, 0, lane});
        // The segment around the outside block turns up.
        builder.addReserved(ReservedEvent{4, 4 * MiB, 0x50000000, lane});
        builder.addReserved(ReservedEvent{4, -10 * MiB, 0, lane});
        // and is released while its block lives on.
        builder.addReserved(ReservedEvent{5, -4 * MiB, 0x50000000, lane});
        const auto trace = builder.finish();

        const AllocatorState before = allocatorStateAt(*trace, kCuda0, 2);
        QCOMPARE(before.outsideBlocks.size(), std::size_t(1));
        QCOMPARE(before.outsideBlocks[0].addr, std::uint64_t(0x50000000));
        QCOMPARE(before.outsideBlocks[0].event, std::size_t(0));
        QCOMPARE(printTotals(before), QStringLiteral("reserved 20 allocated 7 free 16 largest 16 outside 3 unplaced 0"));
        QVERIFY(before.layoutKnown());

        // With an unplaced reserve the outside block is taken to lie in it: 10 - 3 MiB free
        // whose layout is unknown.
        const AllocatorState unplaced = allocatorStateAt(*trace, kCuda0, 3);
        QCOMPARE(printTotals(unplaced), QStringLiteral("reserved 30 allocated 7 free 23 largest - outside 3 unplaced 10"));
        QVERIFY(!unplaced.layoutKnown());
        QVERIFY(!unplaced.unusableShare(MiB));

        const AllocatorState after = allocatorStateAt(*trace, kCuda0, 4);
        QVERIFY(after.outsideBlocks.empty());
        QCOMPARE(printSegments(after),
                 QStringLiteral("0x10000000 20: blocks 0+4; free 4+16\n0x50000000 4: blocks 0+3; free 3+1"));
        QCOMPARE(printTotals(after), QStringLiteral("reserved 24 allocated 7 free 17 largest 16 outside 0 unplaced 0"));

        const AllocatorState released = allocatorStateAt(*trace, kCuda0, 5);
        QCOMPARE(released.outsideBlocks.size(), std::size_t(1));
        QCOMPARE(printTotals(released), QStringLiteral("reserved 20 allocated 7 free 16 largest 16 outside 3 unplaced 0"));
    }

    void seriesFollowsEveryChange()
    {
        const auto trace = traceFrom(QStringLiteral("t=0 reserve 0x10000000 20MiB\n"
                                                    "t=10 alloc 0x10000000 8MiB\n"
                                                    "t=20 alloc 0x10800000 4MiB\n"
                                                    "t=30 free 0x10000000\n"
                                                    "t=40 reserve 0x20000000 2MiB\n"
                                                    "t=40 alloc 0x20000000 1MiB\n"
                                                    "t=45 alloc 0x60000000 1MiB device=cuda:1\n"
                                                    "t=50 free 0x10800000\n"
                                                    "t=60 unreserve 0x10000000\n"
                                                    "t=70 unreserve 0x20000000\n"
                                                    "t=70 free 0x20000000\n"));
        const AllocatorSeries series = allocatorSeries(*trace, kCuda0);
        QCOMPARE(series.layout, ReservedLayout::Segments);
        // time:reserved/allocated/free/largest free, in MiB; cuda:1's event is not a change here.
        QCOMPARE(printSeries(series), QStringLiteral("0:20/0/20/20 10:20/8/12/12 20:20/12/8/8 30:20/4/16/8 40:22/5/17/8 "
                                                     "50:22/1/21/20 60:2/1/1/1 70:0/0/0/0"));
        // The timeline's curve: where the largest free block changes, and the last point.
        QCOMPARE(largestFreeCurve(*trace, kCuda0), changesOfLargestFree(series));
        QCOMPARE(largestFreeCurve(*trace, kCuda0).size(), std::size_t(6)); // 30 and 40 hold 8 MiB as 20 did
        // Every point is the state at its time.
        for (const AllocatorPoint &point : series.points) {
            const AllocatorState state = allocatorStateAt(*trace, kCuda0, point.timeNs);
            QCOMPARE(point.reservedBytes, state.reservedBytes);
            QCOMPARE(point.freeBytes, state.freeBytes);
            QCOMPARE(point.largestFreeBytes, state.largestFreeBytes);
        }
    }

    void seriesWithoutLayoutHasNoLargestFreeBlock_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("layout");
        QTest::addColumn<QString>("points");
        QTest::addRow("running totals, as Kineto gives them")
            << QStringLiteral("t=0 reserve 0x0 20MiB\nt=1 alloc a 6MiB\nt=2 unreserve 0x0 20MiB\nt=2 reserve 0x0 30MiB\n")
            << int(ReservedLayout::Totals) << QStringLiteral("0:20/0/20/- 1:20/6/14/- 2:30/6/24/-");
        QTest::addRow("no reserved memory at all") << QStringLiteral("t=0 alloc a 6MiB\nt=1 free a\n")
                                                   << int(ReservedLayout::None) << QStringLiteral("0:0/6/0/- 1:0/0/0/-");
        QTest::addRow("pools of cudaMallocAsync carry addresses, but only totals")
            << QStringLiteral("meta allocator.mode async\nt=0 reserve 0x10000000 20MiB\nt=1 alloc 0x10000000 6MiB\n")
            << int(ReservedLayout::Totals) << QStringLiteral("0:20/0/20/- 1:20/6/14/-");
    }

    void seriesWithoutLayoutHasNoLargestFreeBlock()
    {
        QFETCH(QString, text);
        QFETCH(int, layout);
        QFETCH(QString, points);
        const AllocatorSeries series = allocatorSeries(*traceFrom(text), kCuda0);
        QCOMPARE(int(series.layout), layout);
        QCOMPARE(printSeries(series), points);
        QVERIFY(largestFreeCurve(*traceFrom(text), kCuda0).empty());
    }

    void outOfMemoryVerdicts_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("verdict");
        QTest::addColumn<QString>("figures"); // reserved/allocated/free/largest, MiB
        QTest::addColumn<QString>("explanation");
        // 20 MiB with blocks at 6 and 14 MiB (one at 10 MiB came and went): free runs of 6, 6
        // and 4 MiB, 16 MiB free.
        const QString fragmented = QStringLiteral("t=0 reserve 0x10000000 20MiB\n"
                                                  "t=1 alloc 0x10600000 2MiB\n"
                                                  "t=2 alloc 0x10e00000 2MiB\n"
                                                  "t=3 alloc 0x10a00000 2MiB\n"
                                                  "t=4 free 0x10a00000\n");
        QTest::addRow("12 MiB free but no run of 8 MiB")
            << fragmented + QStringLiteral("t=5 oom 8MiB\n") << QStringLiteral("fragmentation") << QStringLiteral("20/4/16/6")
            << QStringLiteral("Allocating 8.000 MiB on cuda:0 failed although 16.00 MiB of the 20.00 MiB reserved was free: "
                              "the largest free block was only 6.000 MiB, so the free memory was fragmented; set "
                              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or release cached memory with "
                              "torch.cuda.empty_cache().");
        QTest::addRow("more than is free in total")
            << fragmented + QStringLiteral("t=5 oom 17MiB\n") << QStringLiteral("lack of memory") << QStringLiteral("20/4/16/6")
            << QStringLiteral("Allocating 17.00 MiB on cuda:0 failed because only 16.00 MiB of the 20.00 MiB reserved was "
                              "free (4.000 MiB allocated): the memory was used up, so the step must keep less (smaller "
                              "batch, checkpointing), not merely pack it better.");
        QTest::addRow("totals only: enough free in total, layout unknown")
            << QStringLiteral("t=0 reserve 0x0 20MiB\nt=1 alloc a 8MiB\nt=2 oom 8MiB\n") << QStringLiteral("unknown")
            << QStringLiteral("20/8/12/-")
            << QStringLiteral("Allocating 8.000 MiB on cuda:0 failed with 12.00 MiB of the 20.00 MiB reserved free, enough in "
                              "total, but the trace records reserved memory only as totals, so whether it was "
                              "fragmented cannot be told.");
        QTest::addRow("totals alone show a lack of memory")
            << QStringLiteral("t=0 reserve 0x0 20MiB\nt=1 alloc a 16MiB\nt=2 oom 8MiB\n") << QStringLiteral("lack of memory")
            << QStringLiteral("20/16/4/-") << QString();
        QTest::addRow("no reserved memory recorded") << QStringLiteral("t=1 alloc a 16MiB\nt=2 oom 8MiB\n")
                                                     << QStringLiteral("unknown") << QStringLiteral("0/16/0/-") << QString();
        QTest::addRow("expandable segments merge the runs: the request fits")
            << QStringLiteral("meta allocator.expandable_segments true\n") + QString::fromUtf8(kAdjacentMaps)
                   + QStringLiteral("t=3 oom 24MiB\n")
            << QStringLiteral("unknown") << QStringLiteral("40/14/26/26") << QString();
    }

    void outOfMemoryVerdicts()
    {
        QFETCH(QString, text);
        QFETCH(QString, verdict);
        QFETCH(QString, figures);
        QFETCH(QString, explanation);
        const auto trace = traceFrom(text);
        const std::vector<OomAnalysis> analyses = analyseOutOfMemory(*trace);
        QCOMPARE(analyses.size(), std::size_t(1));
        const OomAnalysis &oom = analyses.front();
        QCOMPARE(oom.marker, std::size_t(0));
        QCOMPARE(QString::fromUtf8(oomVerdictName(oom.verdict)), verdict);
        QCOMPARE(QStringLiteral("%1/%2/%3/%4")
                     .arg(size(oom.reservedBytes), size(oom.allocatedBytes), size(oom.freeBytes),
                          oom.largestFreeBytes ? size(*oom.largestFreeBytes) : QStringLiteral("-")),
                 figures);
        if (!explanation.isEmpty())
            QCOMPARE(qs(oom.explanation), explanation);
        QVERIFY(!oom.explanation.empty());
    }

    void snapshotKeepsWhatTheGpuHadFree()
    {
        // The fixture's oom entry asks for 80 GiB with "device_free" 3 MiB.
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("snapshot_p4.pickle"))));
        const std::vector<OomAnalysis> analyses = analyseOutOfMemory(*trace);
        QCOMPARE(analyses.size(), std::size_t(1));
        QCOMPARE(analyses[0].requestBytes, qint64(80) << 30);
        QCOMPARE(analyses[0].deviceFreeBytes, std::optional<std::int64_t>(3 * MiB));
        QCOMPARE(analyses[0].verdict, OomVerdict::LackOfMemory);
        QVERIFY2(analyses[0].explanation.find("3.000 MiB left outside PyTorch's cache") != std::string::npos,
                 analyses[0].explanation.c_str());
    }

    void realSnapshotEndsWithItsDumpedSegments()
    {
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("real/snapshot_segments_toy.pickle.gz"))));
        const AllocatorState state = allocatorStateAt(*trace, kCuda0, INT64_MAX);
        QCOMPARE(state.layout, ReservedLayout::Segments);
        QVERIFY(state.layoutKnown());
        // Figures from the file's dump-time "segments", computed apart with Python:
        //   d = pickle.load(gzip.open(path)); segs = d["segments"]
        //   reserved = sum(s["total_size"] for s in segs)                       -> 3781165056, 9 segments
        //   active = [b for s in segs for b in s["blocks"] if b["state"] in ("active_allocated", "active_pending_free")]
        //   allocated = sum(b["requested_size"] for b in active)                -> 31719428 in 10 blocks
        //   free runs = gaps between (address, address + requested_size) of the active blocks in each segment
        //                                                                       -> 10 runs, largest 536870912
        // Trace entries carry the size asked for, so the 512 B block that holds a 4 B request counts 4 B
        // (the blocks' "size" sum to 31719936).
        QCOMPARE(state.segments.size(), std::size_t(9));
        QCOMPARE(state.reservedBytes, qint64(3781165056));
        QCOMPARE(state.allocatedBytes, qint64(31719428));
        QCOMPARE(state.freeBytes, qint64(3781165056 - 31719428));
        QCOMPARE(state.largestFreeBytes, std::optional<std::int64_t>(536870912));
        std::size_t blocks = 0, runs = 0;
        for (const AllocatorSegment &segment : state.segments) {
            blocks += segment.blocks.size();
            runs += segment.freeRuns.size();
        }
        QCOMPARE(blocks, std::size_t(10));
        QCOMPARE(runs, std::size_t(10));
        QVERIFY(state.outsideBlocks.empty());
        // Runs under 2 MiB: 1966080 and 2097148 bytes (the small segment after its 4 B block).
        QCOMPARE(*state.unusableShare(2 * MiB), double(1966080 + 2097148) / 3781165056.0);

        const AllocatorSeries series = allocatorSeries(*trace, kCuda0);
        QVERIFY(!series.points.empty());
        QCOMPARE(series.points.back().reservedBytes, state.reservedBytes);
        QCOMPARE(series.points.back().allocatedBytes, state.allocatedBytes);
        QCOMPARE(series.points.back().largestFreeBytes, state.largestFreeBytes);
    }

    // The segments from before a snapshot's trace are placed at their addresses, so the
    // layout at the peak is known. Figures computed apart with Python from the pickle, in
    // time_us (the trace maps no segment in any of these files, so the segments at the
    // peak are the dump-time "segments" of device 0):
    //   d = pickle.load(gzip.open(path)); segs = d["segments"]; t = d["device_traces"][0]
    //   blocks from before the trace: those freed ("free_completed") but never allocated, with
    //     the entry's size, and the dump's active blocks at addresses the trace never
    //     allocated, with their requested_size; then "alloc" adds a block, "free_completed"
    //     removes it. The peak is the first time the sum of the live blocks is highest; the
    //     state is that after every entry at or before that time.
    //   reserved = sum(s["total_size"] for s in segs)
    //   free runs = per segment, the gaps between the live blocks (address, address + size)
    //   allocated = sum of the live blocks' sizes; free = sum of the runs; largest = max run
    // (in kv_cache_state the only entry frees an 8 B block at the peak's own time).
    void realSnapshotsKnowTheirLayoutAtThePeak_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("segments");
        QTest::addColumn<qint64>("reserved");
        QTest::addColumn<qint64>("allocated");
        QTest::addColumn<qint64>("largest");
        QTest::addRow("cs336 medium train") << QStringLiteral("snapshot_cs336_medium_train.pickle.gz") << 377
                                            << qint64(7235174400) << qint64(7013335044) << qint64(20971520);
        QTest::addRow("cs336 forward fp32") << QStringLiteral("snapshot_cs336_forward_fp32.pickle.gz") << 29 << qint64(610271232)
                                            << qint64(556843008) << qint64(6160384);
        QTest::addRow("cs336 compiled train") << QStringLiteral("snapshot_cs336_compiled_train.pickle.gz") << 96
                                              << qint64(4238344192) << qint64(3849232640) << qint64(155189248);
        QTest::addRow("kv cache state") << QStringLiteral("snapshot_kv_cache_state.pickle.gz") << 259 << qint64(17133731840)
                                        << qint64(16380108168) << qint64(452984832);
    }

    void realSnapshotsKnowTheirLayoutAtThePeak()
    {
        QFETCH(QString, file);
        QFETCH(int, segments);
        QFETCH(qint64, reserved);
        QFETCH(qint64, allocated);
        QFETCH(qint64, largest);
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("real/") + file)));
        const PeakReport report = findPeaks(*trace);
        QVERIFY(report.primary);
        const DevicePeak &peak = report.devices[*report.primary];
        const AllocatorState state = allocatorStateAt(*trace, peak.device, peak.timeNs);
        QCOMPARE(state.layout, ReservedLayout::Segments);
        QVERIFY(state.layoutKnown());
        QCOMPARE(state.segments.size(), std::size_t(segments));
        QCOMPARE(state.reservedBytes, reserved);
        // The replay's reserved memory is the trace's reserved series at that time.
        QCOMPARE(peak.reservedAtPeakBytes, std::optional<std::int64_t>(reserved));
        QCOMPARE(state.unplacedReservedBytes, qint64(0));
        QCOMPARE(state.allocatedBytes, allocated);
        std::int64_t inSegments = 0;
        for (const AllocatorSegment &segment : state.segments)
            inSegments += segment.allocatedBytes;
        QCOMPARE(inSegments, state.allocatedBytes - state.outsideBytes);
        QCOMPARE(state.outsideBytes, qint64(0));
        QCOMPARE(state.freeBytes, reserved - allocated);
        QCOMPARE(state.largestFreeBytes, std::optional<std::int64_t>(largest));
        // The curve the timeline draws holds the same figure at the peak, and is the
        // series' largest free block where it changes.
        const std::vector<SeriesPoint> curve = largestFreeCurve(*trace, peak.device);
        QCOMPARE(valueAt(curve, peak.timeNs), largest);
        QCOMPARE(curve, changesOfLargestFree(allocatorSeries(*trace, peak.device)));
    }

    // Real snapshots of the allocator's state alone (an OOM observer's _snapshot(), a bare
    // _dump_snapshot(), device_traces == [[]]): judged as a failure there would be, with
    // the figures the files' own segments give (tests/data/real/README.md).
    void stateOnlySnapshotsGetAVerdict_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("stateOnly");
        QTest::addColumn<QString>("verdict");
        QTest::addColumn<QString>("says"); // in the explanation, or the note beside the peak
        QTest::addRow("a vLLM worker's 24 GiB") << QStringLiteral("snapshot_state_only_verl_qwen2.pickle.gz") << true
                                                << QStringLiteral("lack of memory") << QStringLiteral("672.9 MiB (2.7 %) free");
        QTest::addRow("an OOM observer on PyTorch 2.0")
            << QStringLiteral("snapshot_oom_observer_torch20.pickle.gz") << true << QStringLiteral("lack of memory")
            << QStringLiteral("the device is full");
        QTest::addRow("Stable Diffusion, fragmented")
            << QStringLiteral("snapshot_state_only_two_devices.pickle.gz") << true << QStringLiteral("fragmentation")
            << QStringLiteral("pieces of at most 516.0 MiB");
        QTest::addRow("a dump without history")
            << QStringLiteral("snapshot_state_only_no_history.pickle.gz") << true << QStringLiteral("unknown")
            << QStringLiteral("the largest free block 11.00 MiB");
        QTest::addRow("a training step") << QStringLiteral("snapshot_cs336_medium_train.pickle.gz") << false << QString()
                                         << QString();
    }

    void stateOnlySnapshotsGetAVerdict()
    {
        QFETCH(QString, file);
        QFETCH(bool, stateOnly);
        QFETCH(QString, verdict);
        QFETCH(QString, says);
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("real/") + file)));
        QCOMPARE(isStateOnly(*trace), stateOnly);
        if (!stateOnly)
            return;
        const PeakReport peaks = findPeaks(*trace);
        const OomAnalysis state = judgeDumpState(*trace, peaks.devices[*peaks.primary].device);
        QCOMPARE(qs(std::string(oomVerdictName(state.verdict))), verdict);
        QVERIFY2(qs(state.explanation).contains(says), qPrintable(qs(state.explanation)));
        QCOMPARE(state.allocatedBytes, peaks.devices[*peaks.primary].allocatedBytes);
    }

    // Beside the peak, what its bytes count: requested (memory_viz), and the allocator's
    // blocks (max_memory_allocated) where the file gives or bounds them.
    void peakCountingNotes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("note");
        QTest::addRow("state-only: the blocks' own sizes")
            << QStringLiteral("snapshot_state_only_verl_qwen2.pickle.gz")
            << QStringLiteral("in bytes requested, as memory_viz counts them; 23.76 GiB in the allocator's blocks, as "
                              "torch.cuda.memory_allocated counts them");
        QTest::addRow("a trace: requests rounded up to 512 bytes")
            << QStringLiteral("snapshot_windows_cs336_train.pickle.gz")
            << QStringLiteral("in bytes requested, as memory_viz counts them; at least 12.97 GiB in the allocator's blocks, as "
                              "torch.cuda.max_memory_allocated counts them");
        QTest::addRow("Kineto reports block sizes")
            << QStringLiteral("kineto_h100_qwen_inference.pt.trace.json.gz")
            << QStringLiteral("in the allocator's blocks, as torch.cuda.max_memory_allocated counts them (the profiler reports "
                              "block sizes)");
    }

    void peakCountingNotes()
    {
        QFETCH(QString, file);
        QFETCH(QString, note);
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("real/") + file)));
        const PeakReport peaks = findPeaks(*trace);
        QCOMPARE(qs(peakCountingNote(*trace, peaks.liveAtPeak)), note);
        if (const auto rounded = cachingAllocatorBytes(*trace, *peaks.liveAtPeak))
            QVERIFY(*rounded >= peaks.devices[*peaks.primary].allocatedBytes);
    }
};

QTEST_GUILESS_MAIN(tst_AllocatorState)
#include "tst_allocatorstate.moc"
