// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/liveanalysis.h"
#include "core/analysis/peakfinder.h"
#include "core/analysis/stepstats.h"
#include "core/import/traceloader.h"
#include "growingtrace.h"
#include "testsupport.h"

#include <QElapsedTimer>

#include <algorithm>

using namespace peaklens;

namespace {

// `whole` given to the analysis a piece at a time, as a follower gives it.
void feed(const Trace &whole, std::size_t piece, LiveAnalysis &analysis)
{
    test::growPieceByPiece(whole, piece,
                           [&](const Trace &growing, const TraceGrowth &growth) { analysis.update(growing, growth); });
}

} // namespace

class tst_LiveAnalysis : public QObject
{
    Q_OBJECT

private slots:
    void sameFiguresAsTheWholeTrace_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("piece");
        const QString sample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        QTest::newRow("replay, pieces of 1") << sample << 1;
        QTest::newRow("replay, pieces of 333") << sample << 333;
        QTest::newRow("replay, one piece") << sample << 1000000;
        QTest::newRow("modelled step, pieces of 2") << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt") << 2;
        QTest::newRow("real Kineto V100, pieces of 1000")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_v100_rank1.pt.trace.json.gz") << 1000;
        QTest::newRow("real snapshot, pieces of 77")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz") << 77;
    }

    // Fed a piece at a time, the peaks and each step's peak are those of the whole trace.
    void sameFiguresAsTheWholeTrace()
    {
        QFETCH(QString, path);
        QFETCH(int, piece);
        const auto trace = loadTrace(test::ss(path));
        LiveAnalysis analysis;
        feed(*trace, static_cast<std::size_t>(piece), analysis);

        const PeakReport whole = findPeaks(*trace);
        for (const DevicePeak &peak : whole.devices) {
            const auto live = std::find_if(analysis.peaks().begin(), analysis.peaks().end(),
                                           [&](const DevicePeak &p) { return p.device == peak.device; });
            QVERIFY(live != analysis.peaks().end());
            QCOMPARE(live->allocatedBytes, peak.allocatedBytes);
            QCOMPARE(live->timeNs, peak.timeNs);
        }
        QCOMPARE(analysis.primary().has_value(), whole.primary.has_value());
        if (whole.primary)
            QCOMPARE(analysis.peaks()[*analysis.primary()].device, whole.devices[*whole.primary].device);
        QCOMPARE(analysis.steps().size(), trace->steps.size());
        if (!whole.primary)
            return;
        const Device device = whole.devices[*whole.primary].device;
        const std::vector<StepStats> steps = computeStepStats(*trace, device);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const LiveAnalysis::StepFigures &live = analysis.steps()[i];
            QCOMPARE(live.step.number, steps[i].number);
            if (live.device != device)
                continue; // the step peaked higher on another device
            QCOMPARE(live.peakBytes, steps[i].peakAllocatedBytes);
            QCOMPARE(live.peakTimeNs, steps[i].peakTimeNs);
            QCOMPARE(live.peakPhase, steps[i].peakPhase);
        }
    }

    // The layer holding most at a step's peak is the one the live set at that instant
    // of the whole trace names.
    void topLayerIsTheWholeTracesAtThatInstant()
    {
        const auto trace = loadTrace(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        LiveAnalysis analysis;
        feed(*trace, 500, analysis);
        QVERIFY(!analysis.steps().empty());
        for (const LiveAnalysis::StepFigures &step : analysis.steps()) {
            const LiveSet live = liveSetAt(*trace, step.device, step.peakTimeNs);
            QCOMPARE(live.bytes, step.peakBytes);
            const auto top = std::find_if(live.byLayer.begin(), live.byLayer.end(),
                                          [](const LiveGroup &group) { return group.key != kNoLayer; });
            QVERIFY(top != live.byLayer.end());
            QCOMPARE(step.topLayer, top->key);
            QCOMPARE(step.topLayerBytes, top->bytes);
        }
    }

    // 1,000 updates of 10,000 events, each a step, onto a trace that reaches 10M events:
    // what an update touches stays what its own events and live blocks are, however long
    // the trace has grown. (Counted, not timed; the times are printed.)
    void costOfAnUpdateStaysFlat()
    {
        constexpr std::size_t kUpdates = 1000, kPerUpdate = 10000, kKept = 200;
        Trace trace;
        trace.lanes.push_back(Lane{Device{DeviceType::Cuda, 0}, 0});
        trace.layers.push_back(Layer{"blocks.0", "Block", kNoLayer, 0});
        trace.events.reserve(kUpdates * kPerUpdate);
        LiveAnalysis analysis;
        std::vector<std::uint64_t> work;
        std::vector<qint64> nanoseconds;
        std::uint64_t address = 1;
        for (std::size_t u = 0; u < kUpdates; ++u) {
            const std::int64_t begin = static_cast<std::int64_t>(u * kPerUpdate);
            const std::size_t from = trace.events.size();
            // A step: kKept blocks live through it (freed in the next), the rest freed at once.
            for (std::size_t i = 0; i < kPerUpdate - 2 * kKept; i += 2) {
                trace.events.append(
                    MemoryEvent{begin + std::int64_t(i), 4096, address, 0, 0, 0, Category::Activation, Phase::Forward});
                trace.events.append(
                    MemoryEvent{begin + std::int64_t(i) + 1, -4096, address++, 0, 0, 0, Category::Activation, Phase::Forward});
            }
            for (std::size_t k = 0; k < kKept; ++k) {
                const std::int64_t t = begin + std::int64_t(kPerUpdate - 2 * kKept + k);
                if (u > 0)
                    trace.events.append(MemoryEvent{t, -1 << 20, (u - 1) * kKept + k + (std::uint64_t(1) << 40), 0});
                trace.events.append(MemoryEvent{t, 1 << 20, u * kKept + k + (std::uint64_t(1) << 40), 0, 0, 0,
                                                Category::Activation, Phase::Forward});
            }
            if (u > 0)
                trace.steps.push_back(Step{std::int64_t(u - 1), begin - std::int64_t(kPerUpdate), begin - 1});
            const std::uint64_t before = analysis.work();
            QElapsedTimer clock;
            clock.start();
            analysis.update(trace, TraceGrowth{from, 0, 0, u > 0 ? trace.steps.size() - 1 : 0, 0, false, false});
            nanoseconds.push_back(clock.nsecsElapsed());
            work.push_back(analysis.work() - before);
        }
        QCOMPARE(trace.events.size(), kUpdates * kPerUpdate - kKept); // the first step frees nothing kept before it
        QCOMPARE(analysis.steps().size(), kUpdates - 1);
        const auto median = [](std::vector<qint64> values) {
            std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
            return values[values.size() / 2];
        };
        const std::vector<qint64> first(nanoseconds.begin() + 2, nanoseconds.begin() + 102);
        const std::vector<qint64> last(nanoseconds.end() - 100, nanoseconds.end());
        qInfo("median update: %.3f ms over the first 100 updates, %.3f ms over the last 100 (10M events by then)",
              double(median(first)) / 1e6, double(median(last)) / 1e6);
        // Each update: its own events, and the step it completes with the blocks live at its start.
        for (std::size_t u = 2; u < kUpdates; ++u)
            QVERIFY2(work[u] <= kPerUpdate + (kPerUpdate + kKept) + kKept,
                     qPrintable(QStringLiteral("update %1 touched %2").arg(u).arg(work[u])));
        QCOMPARE(work[kUpdates - 1], work[2]);
    }
};

QTEST_GUILESS_MAIN(tst_LiveAnalysis)
#include "tst_liveanalysis.moc"
