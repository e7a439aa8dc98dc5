// SPDX-License-Identifier: Apache-2.0
#include "core/document/growinganalysis.h"
#include "core/import/traceloader.h"
#include "growingtrace.h"
#include "testsupport.h"

#include <QTest>

using namespace peaklens;
using peaklens::test::qs;

namespace {

QString printPeaks(const PeakReport &peaks)
{
    QStringList parts;
    for (const DevicePeak &peak : peaks.devices)
        parts << qs(peak.device.toString())
                     + QStringLiteral(" %1 at %2 (event %3), reserved %4 at %5, %6 then")
                           .arg(peak.allocatedBytes)
                           .arg(peak.timeNs)
                           .arg(peak.eventIndex ? qint64(*peak.eventIndex) : -1)
                           .arg(peak.reservedBytes.value_or(-1))
                           .arg(peak.reservedTimeNs.value_or(-1))
                           .arg(peak.reservedAtPeakBytes.value_or(-1));
    parts << QStringLiteral("primary %1").arg(peaks.primary ? qint64(*peaks.primary) : -1);
    if (peaks.liveAtPeak) {
        parts << QStringLiteral("live %1 in %2 blocks").arg(peaks.liveAtPeak->bytes).arg(peaks.liveAtPeak->allocations.size());
        for (const LiveGroup &group : peaks.liveAtPeak->byLayer)
            parts << QStringLiteral("layer %1: %2 in %3").arg(qint64(group.key)).arg(group.bytes).arg(group.blocks);
    }
    return parts.join(QStringLiteral("\n"));
}

QString printSteps(const std::vector<StepStats> &steps)
{
    QStringList lines;
    for (const StepStats &s : steps)
        lines << QStringLiteral("step %1 [%2, %3]: from %4, peak %5 at %6 (%7), %8 in %9")
                     .arg(s.number)
                     .arg(s.beginNs)
                     .arg(s.endNs)
                     .arg(s.startBytes)
                     .arg(s.peakAllocatedBytes)
                     .arg(s.peakTimeNs)
                     .arg(int(s.peakPhase))
                     .arg(s.allocatedBytes)
                     .arg(s.allocations);
    return lines.join(QStringLiteral("\n"));
}

QString printLayers(const std::vector<LayerStats> &layers, bool withTimes)
{
    QStringList lines;
    for (const LayerStats &l : layers) {
        QString line = QStringLiteral("%1: %2 (self %3)").arg(qint64(l.layer)).arg(l.activationBytes).arg(l.selfActivationBytes);
        if (withTimes)
            line += QStringLiteral(", fwd %1 x%2, bwd %3 x%4")
                        .arg(l.forwardNs)
                        .arg(l.forwardCalls)
                        .arg(l.backwardNs)
                        .arg(l.backwardCalls);
        lines << line;
    }
    return lines.join(QStringLiteral("\n"));
}

QString printTimeline(const TimelineSeries &timeline)
{
    QStringList lines{
        qs(timeline.device.toString())
        + QStringLiteral(": %1 allocated points, %2 reserved").arg(timeline.allocated.size()).arg(timeline.reserved.size())};
    if (!(timeline.allocated.empty()))
        lines << QStringLiteral("last %1 at %2").arg(timeline.allocated.back().bytes).arg(timeline.allocated.back().timeNs);
    for (const GroupSeries &group : timeline.groups)
        lines << qs(group.label) + QStringLiteral(": %1 points, last %2").arg(group.points.size()).arg(group.points.back().bytes);
    return lines.join(QStringLiteral("\n"));
}

QString printModel(const std::optional<CostModel> &model)
{
    if (!model)
        return QStringLiteral("no model");
    QStringList layers;
    for (const ChainLayer &layer : model->layers)
        layers << qs(layer.path)
                      + QStringLiteral(" A=%1 d=%2 x=%3 L=%4")
                            .arg(layer.retainedBytes)
                            .arg(layer.savingBytes)
                            .arg(layer.regeneratedBytes)
                            .arg(layer.levelAtBackwardBytes);
    return QStringLiteral("step %1, %2 ns ± %3, peak %4, %5 points: ")
               .arg(model->step.value_or(-1))
               .arg(model->stepTimeNs)
               .arg(model->stepTimeSpreadNs)
               .arg(model->measuredPeakBytes)
               .arg(model->curve.size())
           + layers.join(QStringLiteral("; "));
}

// Every range belongs to one of the trace's steps: then the layer times of the steps are
// those of the whole trace.
bool rangesAllInSteps(const Trace &trace)
{
    return std::all_of(trace.ranges.begin(), trace.ranges.end(), [&](const Range &range) {
        return std::any_of(trace.steps.begin(), trace.steps.end(), [&](const Step &step) {
            return step.number == range.step && range.beginNs >= step.beginNs && range.endNs <= step.endNs;
        });
    });
}

// A training run of `steps` steps of `perStep` events: four blocks whose forwards each keep
// activations until their backward (a little more each step, so every step sets a new
// peak), the rest allocated and freed at once.
std::shared_ptr<Trace> syntheticRun(std::size_t steps, std::size_t perStep)
{
    auto trace = std::make_shared<Trace>();
    trace->lanes.push_back(Lane{Device{DeviceType::Cuda, 0}, 0});
    trace->layers.push_back(Layer{"blocks", "ModuleList", kNoLayer, 0});
    for (int b = 0; b < 4; ++b)
        trace->layers.push_back(Layer{"blocks." + std::to_string(b), "Block", 0, 0});
    trace->events.reserve(steps * perStep);
    const std::size_t perPhase = perStep / 8; // a forward and a backward per block
    std::uint64_t address = 1;
    for (std::size_t s = 0; s < steps; ++s) {
        std::int64_t t = static_cast<std::int64_t>(s * perStep * 10);
        const std::int64_t stepBegin = t;
        std::vector<std::uint64_t> kept(4);
        for (std::uint32_t phase = 0; phase < 8; ++phase) {
            const bool forward = phase < 4;
            const std::uint32_t block = forward ? phase : 7 - phase;
            const std::uint32_t layer = block + 1;
            const std::int64_t begin = t;
            if (!forward)
                trace->events.append(MemoryEvent{t++, -(std::int64_t(1 << 20) + std::int64_t(s)), kept[block], 0, layer, 0,
                                                 Category::Activation, Phase::Backward});
            for (std::size_t i = forward ? 1 : 2; i + 1 < perPhase; i += 2) {
                trace->events.append(MemoryEvent{t++, 4096, address, 0, layer, 0, Category::Activation,
                                                 forward ? Phase::Forward : Phase::Backward});
                trace->events.append(MemoryEvent{t++, -4096, address++, 0, layer, 0, Category::Activation,
                                                 forward ? Phase::Forward : Phase::Backward});
            }
            if (forward) {
                kept[block] = address++;
                trace->events.append(MemoryEvent{t++, std::int64_t(1 << 20) + std::int64_t(s), kept[block], 0, layer, 0,
                                                 Category::Activation, Phase::Forward});
            }
            trace->ranges.push_back(Range{layer, forward ? Phase::Forward : Phase::Backward, std::int64_t(s), begin, t++});
        }
        trace->steps.push_back(Step{std::int64_t(s), stepBegin, t++});
    }
    std::sort(trace->ranges.begin(), trace->ranges.end(), [](const Range &a, const Range &b) { return a.beginNs < b.beginNs; });
    return trace;
}

} // namespace

class tst_GrowingAnalysis : public QObject
{
    Q_OBJECT

private slots:
    void sameFiguresAsTheWholeTrace_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("piece");
        const QString sample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        QTest::newRow("replay, pieces of 7") << sample << 7;
        QTest::newRow("replay, pieces of 333") << sample << 333;
        QTest::newRow("replay, one piece") << sample << 1000000;
        QTest::newRow("modelled step, pieces of 2") << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt") << 2;
        QTest::newRow("real Kineto V100, pieces of 1000")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_v100_rank1.pt.trace.json.gz") << 1000;
        QTest::newRow("real snapshot, pieces of 77")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz") << 77;
        QTest::newRow("synthetic run of 12 steps, pieces of 100") << QString() << 100;
    }

    // Fed as a follower feeds it, the analysis ends with the figures of the whole trace.
    void sameFiguresAsTheWholeTrace()
    {
        QFETCH(QString, path);
        QFETCH(int, piece);
        const std::shared_ptr<const Trace> trace = path.isEmpty() ? syntheticRun(12, 1000) : loadTrace(test::ss(path));
        GrowingAnalysis growing;
        std::shared_ptr<const Trace> last;
        test::growPieceByPiece(*trace, static_cast<std::size_t>(piece), [&](const Trace &partial, const TraceGrowth &growth) {
            growing.update(partial, growth);
            if (growth.complete)
                last = std::make_shared<const Trace>(partial);
        });
        const AnalysedTrace live = growing.analysed(last);
        const AnalysedTracePtr whole = analyseTrace(std::string(), trace);

        QCOMPARE(live.summary.eventCount, whole->summary.eventCount);
        QCOMPARE(live.summary.firstNs, whole->summary.firstNs);
        QCOMPARE(live.summary.lastNs, whole->summary.lastNs);
        QCOMPARE(printPeaks(live.summary.peak), printPeaks(whole->summary.peak));
        QCOMPARE(live.summary.peakStep, whole->summary.peakStep);
        QCOMPARE(live.summary.peakLayer, whole->summary.peakLayer);
        QCOMPARE(live.summary.peakPhase, whole->summary.peakPhase);
        QCOMPARE(live.device, whole->device);
        QCOMPARE(live.peakBytes, whole->peakBytes);
        QCOMPARE(printSteps(live.summary.steps), printSteps(whole->summary.steps));
        QCOMPARE(printLayers(live.summary.layers, rangesAllInSteps(*trace)),
                 printLayers(whole->summary.layers, rangesAllInSteps(*trace)));

        QCOMPARE(printTimeline(live.byCategory), printTimeline(whole->byCategory));
        QVERIFY(live.byCategory.allocated == whole->byCategory.allocated);
        QVERIFY(live.byCategory.reserved == whole->byCategory.reserved);
        for (std::size_t g = 0; g < whole->byCategory.groups.size(); ++g)
            QVERIFY(live.byCategory.groups[g].points == whole->byCategory.groups[g].points);
        const TimelineSeries byLayer =
            regroupTimeline(*trace, whole->byCategory, GroupBy::Layer, blockDepth(*trace, defaultChain(*trace)));
        QCOMPARE(printTimeline(growing.byLayer()), printTimeline(byLayer));
        QCOMPARE(growing.byLayer().layerDepth, byLayer.layerDepth);
        for (std::size_t g = 0; g < byLayer.groups.size(); ++g)
            QVERIFY(growing.byLayer().groups[g].points == byLayer.groups[g].points);

        // The model's memory is its step's; its times are medians over the steps in a whole
        // analysis, the peak step's here, so only the step time is compared.
        QCOMPARE(live.model.has_value(), whole->model.has_value());
        if (whole->model) {
            QCOMPARE(printModel(live.model).section(QLatin1Char(':'), 1), printModel(whole->model).section(QLatin1Char(':'), 1));
            QCOMPARE(live.model->step, whole->model->step);
            QCOMPARE(live.model->measuredPeakBytes, whole->model->measuredPeakBytes);
            QCOMPARE(live.model->stepTimeNs, whole->model->stepTimeNs);
            QCOMPARE(live.model->stepTimeSpreadNs, whole->model->stepTimeSpreadNs);
        }
        QCOMPARE(live.checkpoint, whole->checkpoint);
    }

    // What the views were handed stays as it was while the analysis goes on growing.
    void handedSeriesDoNotChange()
    {
        const auto trace = loadTrace(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        GrowingAnalysis growing;
        std::vector<std::pair<AnalysedTrace, std::vector<SeriesPoint>>> handed;
        std::vector<std::vector<SeriesPoint>> handedBands;
        std::vector<TimelineSeries> bands;
        test::growPieceByPiece(*trace, 97, [&](const Trace &partial, const TraceGrowth &growth) {
            growing.update(partial, growth);
            AnalysedTrace analysed = growing.analysed(std::make_shared<const Trace>(partial));
            std::vector<SeriesPoint> points = analysed.byCategory.allocated.toVector();
            handed.emplace_back(std::move(analysed), std::move(points));
            bands.push_back(growing.byLayer());
            handedBands.push_back(bands.back().groups.empty() ? std::vector<SeriesPoint>()
                                                              : bands.back().groups.front().points.toVector());
        });
        QVERIFY(handed.size() > 10);
        for (std::size_t i = 0; i < handed.size(); ++i) {
            QCOMPARE(handed[i].first.byCategory.allocated.toVector(), handed[i].second);
            QCOMPARE(bands[i].groups.empty() ? std::vector<SeriesPoint>() : bands[i].groups.front().points.toVector(),
                     handedBands[i]);
        }
        // Each later one holds the earlier ones' points, then its own.
        const auto &final = handed.back().first.byCategory.allocated;
        const AnalysedTracePtr whole = analyseTrace(std::string(), trace);
        for (const SeriesPoint &point : whole->byCategory.allocated) {
            const auto at = std::upper_bound(final.begin(), final.end(), point.timeNs,
                                             [](std::int64_t t, const SeriesPoint &p) { return t < p.timeNs; });
            QVERIFY(at != final.begin());
            QCOMPARE(std::prev(at)->bytes, point.bytes);
        }
    }

    // 1,000 updates growing a run to 10M events: each update touches its own events and
    // rows, the step it completes and the blocks live at its start, however long the run.
    void costOfAnUpdateStaysFlat()
    {
        constexpr std::size_t kSteps = 1000, kPerStep = 10000;
        const auto whole = syntheticRun(kSteps, kPerStep);
        QVERIFY(whole->events.size() >= 9'900'000);
        GrowingAnalysis growing;
        std::vector<std::uint64_t> work;
        std::size_t updates = 0;
        test::growPieceByPiece(*whole, kPerStep - 4, [&](const Trace &partial, const TraceGrowth &growth) {
            const std::uint64_t before = growing.work();
            growing.update(partial, growth);
            work.push_back(growing.work() - before);
            if (++updates % 100 == 0) {
                // What the views are handed shares the series rather than copying them.
                const std::shared_ptr<const Trace> unowned(&partial, [](const Trace *) {});
                const AnalysedTrace analysed = growing.analysed(unowned);
                QCOMPARE(analysed.byCategory.allocated.data(), growing.analysed(unowned).byCategory.allocated.data());
            }
        });
        QVERIFY(work.size() >= 1000);
        const auto highest = [](auto begin, auto end) { return *std::max_element(begin, end); };
        const std::uint64_t early = highest(work.begin() + 2, work.begin() + 102);
        const std::uint64_t late = highest(work.end() - 101, work.end() - 1);
        qInfo("most work in an update: %llu over updates 2-101, %llu over the last 100 (10M events by then)",
              static_cast<unsigned long long>(early), static_cast<unsigned long long>(late));
        // Where the pieces fall against the steps moves a row or two between updates; an
        // update that grew with the run would touch a thousand times more by its end.
        QVERIFY2(late <= early + early / 100, qPrintable(QStringLiteral("%1 against %2").arg(late).arg(early)));
        // New events, a completed step's events twice (its figures and its table row), its
        // carried blocks, the live set at its new peak, ranges and layers: a few times a step.
        QVERIFY2(early <= 6 * kPerStep, qPrintable(QString::number(early)));
        const AnalysedTrace analysed = growing.analysed(whole);
        QCOMPARE(analysed.summary.steps.size(), kSteps);
        QVERIFY(analysed.model.has_value());
        QCOMPARE(*analysed.model->step, std::int64_t(kSteps - 1));
    }
};

QTEST_GUILESS_MAIN(tst_GrowingAnalysis)
#include "tst_growinganalysis.moc"
