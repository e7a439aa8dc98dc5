// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/levelofdetail.h"
#include "core/analysis/peakfinder.h"
#include "core/analysis/timelineseries.h"
#include "core/import/traceloader.h"
#include "core/plan/costmodel.h"
#include "testsupport.h"

#include <map>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::traceFrom;

namespace {

// Any series: a vector, the shared totals or a group's packed points.
template<typename Points>
QString printPoints(const Points &points)
{
    QStringList parts;
    for (const SeriesPoint &point : points)
        parts << QStringLiteral("%1:%2").arg(point.timeNs).arg(point.bytes);
    return parts.join(QLatin1Char(' '));
}

QString printGroups(const TimelineSeries &series)
{
    QStringList parts;
    for (const GroupSeries &group : series.groups)
        parts << qs(group.label) + QStringLiteral(" [") + printPoints(group.points) + QLatin1Char(']');
    return parts.join(QLatin1Char(' '));
}

const char *const kTrace = "t=0 reserve s 1000\n"
                           "t=0 alloc p 100 parameter @other:net.b0.fc\n"
                           "t=1 alloc a 300 activation @fwd:net.b0.fc\n"
                           "t=1 alloc c 50 activation @fwd:net.b1\n"
                           "t=2 alloc t 20 temporary\n"
                           "t=3 free a @bwd:net.b0.fc\n"
                           "t=4 alloc x 5 device=cpu\n";

// A group's value at a time: its last point at or before it.
std::int64_t valueAt(const std::vector<SeriesPoint> &points, std::int64_t timeNs)
{
    auto after =
        std::upper_bound(points.begin(), points.end(), timeNs, [](std::int64_t t, const SeriesPoint &p) { return t < p.timeNs; });
    return after == points.begin() ? 0 : std::prev(after)->bytes;
}

// Checks the layer bands of the primary device against the blocks live at each checked
// time (the peak finder's live set, an independent walk): the bands sum to the allocated
// envelope and each band holds exactly its layer's live blocks. Returns the first
// disagreement, or an empty string.
QString bandsAgainstLiveBlocks(const Trace &trace, int samples, int depth = 0)
{
    const PeakReport peaks = findPeaks(trace);
    if (!peaks.primary)
        return QStringLiteral("no peak");
    const Device device = peaks.devices[*peaks.primary].device;
    const TimelineSeries series = buildTimeline(trace, device, GroupBy::Layer, depth);
    // A layer's band at `depth`: its ancestor that many levels below the root.
    const auto bandOf = [&](std::uint32_t layer) {
        std::vector<std::uint32_t> chain;
        for (std::uint32_t l = layer; l != kNoLayer; l = trace.layers[l].parent)
            chain.push_back(l);
        return depth > 0 && chain.size() >= std::size_t(depth) ? chain[chain.size() - std::size_t(depth)] : layer;
    };
    // Unpacked, so the check reads them its own way.
    std::map<std::uint32_t, std::vector<SeriesPoint>> bandPoints;
    std::map<std::uint32_t, const GroupSeries *> bands;
    for (const GroupSeries &group : series.groups) {
        bands[group.key] = &group;
        bandPoints[group.key] = group.points.toVector();
    }
    const std::size_t stride = std::max<std::size_t>(1, series.allocated.size() / static_cast<std::size_t>(samples));
    for (std::size_t p = 0; p < series.allocated.size(); ++p) {
        const std::int64_t t = series.allocated[p].timeNs;
        std::int64_t sum = 0;
        for (const auto &[key, band] : bands)
            sum += valueAt(bandPoints[key], t);
        if (sum != series.allocated[p].bytes)
            return QStringLiteral("at %1 ns the bands sum to %2, the envelope is %3")
                .arg(t)
                .arg(sum)
                .arg(series.allocated[p].bytes);
        if (p % stride != 0 && p + 1 != series.allocated.size())
            continue;
        const LiveSet live = liveSetAt(trace, device, t);
        std::map<std::uint32_t, std::int64_t> expected;
        for (const LiveGroup &group : live.byLayer)
            expected[bandOf(group.key)] += group.bytes;
        for (const auto &[key, band] : bands) {
            const std::int64_t want = expected.count(key) ? expected[key] : 0;
            if (valueAt(bandPoints[key], t) != want)
                return QStringLiteral("at %1 ns the band of %2 holds %3, its live blocks %4")
                    .arg(t)
                    .arg(qs(band->label))
                    .arg(valueAt(bandPoints[key], t))
                    .arg(want);
        }
    }
    return {};
}

} // namespace

class tst_TimelineSeries : public QObject
{
    Q_OBJECT

private slots:
    void groupsAndTotals_data()
    {
        QTest::addColumn<int>("groupBy");
        QTest::addColumn<int>("depth");
        QTest::addColumn<QString>("groups");
        QTest::addRow("by category") << int(GroupBy::Category) << 0
                                     << QStringLiteral("activation [1:350 3:50] parameter [0:100] temporary [2:20]");
        QTest::addRow("by innermost layer") << int(GroupBy::Layer) << 0
                                            << QStringLiteral("net.b0.fc [0:100 1:400 3:100] net.b1 [1:50] (no layer) [2:20]");
        QTest::addRow("by second-level layer")
            << int(GroupBy::Layer) << 2 << QStringLiteral("net.b0 [0:100 1:400 3:100] net.b1 [1:50] (no layer) [2:20]");
        QTest::addRow("by top-level layer") << int(GroupBy::Layer) << 1
                                            << QStringLiteral("net [0:100 1:450 3:150] (no layer) [2:20]");
    }
    void groupsAndTotals()
    {
        QFETCH(int, groupBy);
        QFETCH(int, depth);
        QFETCH(QString, groups);
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const TimelineSeries series = buildTimeline(*trace, Device{}, static_cast<GroupBy>(groupBy), depth);
        // Events at the same time merge into one point; the CPU allocation is another device's.
        QCOMPARE(printPoints(series.allocated), QStringLiteral("0:100 1:450 2:470 3:170"));
        QCOMPARE(printPoints(series.reserved), QStringLiteral("0:1000"));
        QCOMPARE(printGroups(series), groups);
    }

    // A second grouping of the same timeline holds the same totals, not a copy, and the
    // same groups as a timeline built for it alone.
    void regroupingSharesTheTotals_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("groupBy");
        QTest::addRow("small trace, by layer") << QString() << int(GroupBy::Layer);
        QTest::addRow("small trace, by category") << QString() << int(GroupBy::Category);
        QTest::addRow("a real snapshot, by layer")
            << QFINDTESTDATA("../../data/real/snapshot_cs336_medium_train.pickle.gz") << int(GroupBy::Layer);
        QTest::addRow("a real Kineto trace, by layer")
            << QFINDTESTDATA("../../data/real/kineto_h100_qwen_inference.pt.trace.json.gz") << int(GroupBy::Layer);
    }
    void regroupingSharesTheTotals()
    {
        QFETCH(QString, file);
        QFETCH(int, groupBy);
        const auto trace = file.isEmpty() ? traceFrom(QString::fromUtf8(kTrace)) : loadTrace(test::ss(file));
        const Device device = findPeaks(*trace).devices.front().device;
        const int depth = blockDepth(*trace, defaultChain(*trace));
        const TimelineSeries byCategory = buildTimeline(*trace, device, GroupBy::Category);
        const TimelineSeries regrouped = regroupTimeline(*trace, byCategory, static_cast<GroupBy>(groupBy), depth);
        const TimelineSeries alone = buildTimeline(*trace, device, static_cast<GroupBy>(groupBy), depth);
        QVERIFY(!regrouped.allocated.empty());
        QCOMPARE(regrouped.allocated.data(), byCategory.allocated.data());
        QCOMPARE(regrouped.reserved.data(), byCategory.reserved.data());
        QVERIFY(regrouped.allocated == alone.allocated);
        QVERIFY(regrouped.reserved == alone.reserved);
        QCOMPARE(printGroups(regrouped), printGroups(alone));
    }

    void aBlockStaysWithTheLayerThatAllocatedIt()
    {
        // c is made in net.b1 and freed while net.b0.fc runs its backward.
        const auto trace = traceFrom(QStringLiteral("t=0 alloc c 50 @fwd:net.b1\nt=1 alloc a 300 @fwd:net.b0.fc\n"
                                                    "t=2 free c @bwd:net.b0.fc\nt=3 free a @bwd:net.b1\n"));
        QCOMPARE(printGroups(buildTimeline(*trace, Device{}, GroupBy::Layer)),
                 QStringLiteral("net.b0.fc [1:300 3:0] net.b1 [0:50 2:0]"));
        QCOMPARE(bandsAgainstLiveBlocks(*trace, 100), QString());
    }

    void bandsHoldTheirLayersLiveBlocks_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addRow("a replayed training step")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        QTest::addRow("a modelled step") << QFINDTESTDATA("../../data/modelled-step.pltxt");
        // Imported from files recorded on real GPUs: layers from module calls in the
        // stacks, and from Kineto's nn.Module spans.
        QTest::addRow("a real snapshot") << QFINDTESTDATA("../../data/real/snapshot_cs336_medium_train.pickle.gz");
        QTest::addRow("a real Kineto trace") << QFINDTESTDATA("../../data/real/kineto_h100_qwen_inference.pt.trace.json.gz");
    }

    void bandsHoldTheirLayersLiveBlocks()
    {
        QFETCH(QString, file);
        const auto trace = loadTrace(test::ss(file));
        QCOMPARE(bandsAgainstLiveBlocks(*trace, 300), QString());
        // One band per repeated block, as the app stacks them.
        const int depth = blockDepth(*trace, defaultChain(*trace));
        QVERIFY(depth > 0);
        QCOMPARE(bandsAgainstLiveBlocks(*trace, 300, depth), QString());
    }

    void layerMemorySumsSubLayers_data()
    {
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QString>("points");
        QTest::addRow("a container") << QStringLiteral("net") << QStringLiteral("0:100 1:450 3:150");
        QTest::addRow("a block with a sub-layer") << QStringLiteral("net.b0") << QStringLiteral("0:100 1:400 3:100");
        QTest::addRow("a leaf") << QStringLiteral("net.b1") << QStringLiteral("1:50");
    }

    void layerMemorySumsSubLayers()
    {
        QFETCH(QString, layer);
        QFETCH(QString, points);
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        QCOMPARE(printPoints(layerMemory(*trace, Device{}, *trace->findLayer(test::ss(layer)))), points);
    }

    void spanStatsOfASelection_data()
    {
        QTest::addColumn<qint64>("begin");
        QTest::addColumn<qint64>("end");
        QTest::addColumn<QString>("stats"); // highest lowest allocated freed
        QTest::addRow("allocations only") << qint64(1) << qint64(3) << QStringLiteral("470 450 370 0");
        QTest::addRow("with a free") << qint64(1) << qint64(4) << QStringLiteral("470 170 370 300");
        QTest::addRow("another device's event left out") << qint64(0) << qint64(10) << QStringLiteral("470 100 470 300");
        QTest::addRow("empty span") << qint64(5) << qint64(5) << QStringLiteral("0 0 0 0");
    }

    void spanStatsOfASelection()
    {
        QFETCH(qint64, begin);
        QFETCH(qint64, end);
        QFETCH(QString, stats);
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const TimelineSeries series = buildTimeline(*trace, Device{}, GroupBy::Category);
        const SpanStats span = spanStats(*trace, series, begin, end);
        QCOMPARE(QStringLiteral("%1 %2 %3 %4")
                     .arg(span.highestBytes)
                     .arg(span.lowestBytes)
                     .arg(span.allocatedBytes)
                     .arg(span.freedBytes),
                 stats);
    }

    void unknownDeviceIsEmpty()
    {
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const TimelineSeries series = buildTimeline(*trace, *Device::parse("cuda:3"), GroupBy::Category);
        QVERIFY(series.allocated.empty());
        QVERIFY(series.groups.empty());
    }
};

QTEST_GUILESS_MAIN(tst_TimelineSeries)
#include "tst_timelineseries.moc"
