// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/peakfinder.h"
#include "core/error.h"
#include "core/import/traceloader.h"
#include "core/plan/plannotes.h"
#include "core/plan/predictor.h"

#include <QFile>

using namespace peaklens;
using peaklens::test::traceFrom;

namespace {

// Two blocks: each saves S bytes, passes on an output of O bytes, and needs a transient of
// T in its forward; the head holds H; backward keeps gradients of G until the optimizer,
// which adds P of state. Parameters: 1000 bytes. Each block's output is saved by the block
// itself (a ReLU's result), so it lives until that block's backward. Levels, with B = 1000:
//   blocks.0 forward   B+S, B+S+T, B+S, B+S+O
//   blocks.1 forward   B+2S+O, B+2S+O+T, B+2S+O, B+2S+2O
//   head               B+2S+2O+H
//   blocks.1 backward  B+2S+2O+G, B+S+2O+G, B+S+O+G
//   blocks.0 backward  B+S+O+2G, B+O+2G, B+2G
//   optimizer          B+2G+P, B+G+P, B+P
// With `releasedByNext`, each output is only the next block's input: the head's backward
// frees blocks.1's, blocks.1's backward frees blocks.0's.
QString chain(int s, int o, int t, int h, int g, int p, bool releasedByNext = false)
{
    return QStringLiteral("t=0 alloc w 1000 parameter\n"
                          "begin step 1\n"
                          "begin fwd:blocks.0\nalloc a0 %1 activation\nalloc t0 %3 temporary\nfree t0\nalloc o0 %2 "
                          "activation\nend fwd:blocks.0\n"
                          "begin fwd:blocks.1\nalloc a1 %1 activation\nalloc t1 %3 temporary\nfree t1\nalloc o1 %2 "
                          "activation\nend fwd:blocks.1\n"
                          "alloc head %4 activation\nfree head\n%7"
                          "begin bwd:blocks.1\nalloc g1 %5 gradient\nfree a1\n%8end bwd:blocks.1\n"
                          "begin bwd:blocks.0\nalloc g0 %5 gradient\nfree a0\n%9end bwd:blocks.0\n"
                          "begin opt\nalloc m %6 optimizer_state\nfree g1\nfree g0\nend opt\n"
                          "end step 1\n")
        .arg(s)
        .arg(o)
        .arg(t)
        .arg(h)
        .arg(g)
        .arg(p)
        .arg(releasedByNext ? QStringLiteral("free o1\n") : QString(),
             releasedByNext ? QStringLiteral("free o0\n") : QStringLiteral("free o1\n"),
             releasedByNext ? QString() : QStringLiteral("free o0\n"));
}

} // namespace

class tst_Predictor : public QObject
{
    Q_OBJECT

private slots:
    void handComputedPeaks_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("checkpoint"); // one character per layer: x = checkpointed
        QTest::addColumn<qint64>("peak");
        QTest::addColumn<int>("phase");
        QTest::addColumn<int>("recomputeOf"); // -1: the peak is not a recompute

        const QString base = chain(300, 100, 500, 50, 200, 100);
        // B+2S+O+T = 2200, in the transient of blocks.1's forward.
        QTest::addRow("peak in forward, nothing checkpointed")
            << base << QStringLiteral("..") << qint64(2200) << int(Phase::Forward) << -1;
        // A recompute starts from the level without any of the layer's blocks (the output
        // is the next layer's to release) and climbs by its forward's rise S+T: for
        // blocks.1, B+2S+2O - (S+O) + 800 = 2200, no higher than its forward was.
        QTest::addRow("the later block's recompute ties its forward")
            << base << QStringLiteral(".x") << qint64(2200) << int(Phase::Forward) << -1;
        // blocks.0 frees S = 300 during blocks.1's forward (1900), but its recompute at the
        // start of its backward climbs from B+S+O+G - (S+O) = 1200 by 800.
        QTest::addRow("recompute transient makes the peak")
            << base << QStringLiteral("x.") << qint64(2000) << int(Phase::Backward) << 0;
        QTest::addRow("all checkpointed: still the recompute")
            << base << QStringLiteral("xx") << qint64(2000) << int(Phase::Backward) << 0;
        // Gradients of 600: B+S+O+2G = 2600 as blocks.0's backward begins.
        const QString bigGradients = chain(300, 100, 500, 50, 600, 100);
        QTest::addRow("peak in backward") << bigGradients << QStringLiteral("..") << qint64(2600) << int(Phase::Backward) << -1;
        // blocks.0's own activations are live in its backward: checkpointing cannot lower it
        // (its recompute, B+S+O+G - (S+O) + 800 = 2400, stays below), and a checkpoint holds
        // the gradient of its output throughout: the trace shows none arriving, so one of
        // the output's size is counted, +O.
        QTest::addRow("a peak in the first block's backward rises")
            << bigGradients << QStringLiteral("x.") << qint64(2700) << int(Phase::Backward) << 0;
        QTest::addRow("checkpointing the later block leaves it")
            << bigGradients << QStringLiteral(".x") << qint64(2600) << int(Phase::Backward) << -1;
        // Outputs released by the next block: the measured step has freed blocks.0's output
        // (B+S+O+G+G-O = 1900 as its backward begins, 2500 with its gradient). Checkpointed,
        // the recompute makes that output again and it lives through the backward, with the
        // output's gradient: 2700.
        const QString released = chain(300, 100, 500, 50, 600, 100, true);
        QTest::addRow("released output: measured")
            << released << QStringLiteral("..") << qint64(2500) << int(Phase::Backward) << -1;
        QTest::addRow("released output: regenerated in backward")
            << released << QStringLiteral("x.") << qint64(2700) << int(Phase::Backward) << 0;
        // Optimizer state of 1500: B+2G+P = 2900 while the optimizer runs; no checkpoint helps.
        const QString bigOptimizer = chain(300, 100, 500, 50, 200, 1500);
        QTest::addRow("base varying with the optimizer step")
            << bigOptimizer << QStringLiteral("..") << qint64(2900) << int(Phase::Optimizer) << -1;
        QTest::addRow("optimizer peak stays")
            << bigOptimizer << QStringLiteral("xx") << qint64(2900) << int(Phase::Optimizer) << -1;
    }
    void handComputedPeaks()
    {
        QFETCH(QString, text);
        QFETCH(QString, checkpoint);
        QFETCH(qint64, peak);
        QFETCH(int, phase);
        QFETCH(int, recomputeOf);
        const auto trace = traceFrom(text);
        const CostModel model = buildCostModel(*trace);
        QCOMPARE(model.layers.size(), std::size_t(2));
        std::vector<bool> toggles;
        for (QChar c : checkpoint)
            toggles.push_back(c == QLatin1Char('x'));
        const Prediction prediction = predict(model, toggles);
        QCOMPARE(prediction.peakBytes, peak);
        QCOMPARE(int(prediction.peakPhase), phase);
        QCOMPARE(prediction.peakInRecomputeOf ? int(*prediction.peakInRecomputeOf) : -1, recomputeOf);
        // The curve agrees with the peak.
        std::int64_t highest = 0;
        for (const SeriesPoint &point : predictCurve(model, toggles))
            highest = std::max(highest, point.bytes);
        QCOMPARE(highest, peak);
    }

    void costModelFigures_data()
    {
        QTest::addColumn<bool>("releasedByNext");
        QTest::addColumn<qint64>("saving");
        QTest::addColumn<qint64>("regenerated");
        QTest::addColumn<qint64>("level1"); // blocks.1's backward begins
        QTest::newRow("output saved by its own layer") << false << qint64(300) << qint64(0) << qint64(1800);
        QTest::newRow("output released by the next") << true << qint64(300) << qint64(100) << qint64(1700);
    }
    void costModelFigures()
    {
        QFETCH(bool, releasedByNext);
        QFETCH(qint64, saving);
        QFETCH(qint64, regenerated);
        QFETCH(qint64, level1);
        const auto trace = traceFrom(chain(300, 100, 500, 50, 200, 100, releasedByNext));
        const CostModel model = buildCostModel(*trace);
        QCOMPARE(model.layers[0].path, std::string("blocks.0"));
        QCOMPARE(model.layers[0].retainedBytes, qint64(400)); // S + O
        QCOMPARE(model.layers[0].outputBytes, qint64(100));
        QCOMPARE(model.layers[0].savingBytes, saving);
        QCOMPARE(model.layers[0].regeneratedBytes, regenerated);
        QCOMPARE(model.layers[0].forwardRiseBytes, qint64(800)); // S + T
        QCOMPARE(model.layers[0].forwardNs, qint64(5));          // begin at t=2, end at t=7
        QCOMPARE(model.layers[1].levelAtBackwardBytes, level1);
        QCOMPARE(model.layers[1].recomputePeakBytes, qint64(1400 + 800)); // B+S+O + S+T, with or without the output
        // Its backward, checkpointed, holds the recomputed output and its gradient (none
        // arrives in this trace, so one of the output's size is counted).
        QCOMPARE(model.layers[0].heldInBackwardBytes, qint64(200));
        QCOMPARE(model.passes, std::size_t(1));
    }

    void nothingCheckpointedIsTheMeasuredStep()
    {
        QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto trace = parseTraceText(file.readAll().toStdString());
        const CostModel model = buildCostModel(*trace);
        QCOMPARE(model.layers.size(), std::size_t(4));
        const Prediction prediction = predict(model, CheckpointSchedule{});
        const DevicePeak measured = findPeaks(*trace).devices.at(0);
        QCOMPARE(prediction.peakBytes, measured.allocatedBytes);
        QCOMPARE(prediction.peakTimeNs, measured.timeNs);
        QCOMPARE(prediction.addedTimeNs, qint64(0));
        // Checkpointing adds each layer's forward time.
        const Prediction all = predict(model, std::vector<bool>(4, true));
        std::int64_t forward = 0;
        for (const ChainLayer &layer : model.layers)
            forward += layer.forwardNs;
        QCOMPARE(all.addedTimeNs, forward);
        QVERIFY(all.peakBytes < prediction.peakBytes);
    }

    // Memory comes from the peak's step; times are medians over the steps, so one slow
    // step does not skew what a plan predicts.
    void timesAreMediansOverSteps()
    {
        QString text = QStringLiteral("t=0 alloc w 1000 parameter\n");
        const int scale[] = {1, 10, 2}; // step 2 is by far the slowest, step 3 the median
        for (int step = 1; step <= 3; ++step) {
            const int k = scale[step - 1];
            text += QStringLiteral("begin step %1\n"
                                   "begin fwd:blocks.0\nalloc a0 100 activation\n+%2us end fwd:blocks.0\n"
                                   "begin fwd:blocks.1\nalloc a1 100 activation\n+%2us end fwd:blocks.1\n"
                                   "begin bwd:blocks.1\nfree a1\n+%3us end bwd:blocks.1\n"
                                   "begin bwd:blocks.0\nfree a0\n+%3us end bwd:blocks.0\n"
                                   "+%4us end step %1\n")
                        .arg(step)
                        .arg(10 * k)
                        .arg(20 * k)
                        .arg(5 * k);
        }
        const CostModel model = buildCostModel(*traceFrom(text));
        // Lines without a time advance the clock by 1 ns, hence the small tolerance.
        auto near = [](std::int64_t actual, std::int64_t expected) { return std::abs(actual - expected) < 20; };
        QCOMPARE(model.layers.size(), std::size_t(2));
        QVERIFY(near(model.layers[0].forwardNs, 20'000));
        QVERIFY(near(model.layers[1].backwardNs, 40'000));
        QVERIFY(near(model.stepTimeNs, 2 * (2 * 10 + 2 * 20 + 5) * 1000));
        // The spread is the median absolute deviation of the step times (65, 650 and 130 us
        // from their median 130 us): the slow step does not widen it.
        QVERIFY(near(model.stepTimeSpreadNs, 65'000));
        QCOMPARE(predict(model, {true, false}).stepTimeNs, model.stepTimeNs + model.layers[0].forwardNs);
    }

    // One step whose first block's forward is a warm-up (a fresh process's first call):
    // its time is flagged and the chain's median predicted instead; the recompute's spread
    // is the chain's. With blocks of times 10, 12, 11, 200 us and 13 us: median 12 us.
    void aWarmUpForwardIsFlaggedNotPredicted()
    {
        QString text = QStringLiteral("t=0 alloc w 1000 parameter\nbegin step 1\n");
        const int forward[] = {200, 10, 12, 11, 13};
        for (int k = 0; k < 5; ++k)
            text +=
                QStringLiteral("begin fwd:blocks.%1\nalloc a%1 100 activation\n+%2us end fwd:blocks.%1\n").arg(k).arg(forward[k]);
        for (int k = 4; k >= 0; --k)
            text += QStringLiteral("begin bwd:blocks.%1\nfree a%1\n+20us end bwd:blocks.%1\n").arg(k);
        text += QStringLiteral("end step 1\n");
        const CostModel model = buildCostModel(*traceFrom(text));
        auto near = [](std::int64_t actual, std::int64_t expected) { return std::abs(actual - expected) < 20; };
        QCOMPARE(model.layers.size(), std::size_t(5));
        QVERIFY(model.layers[0].outlierForwardNs);
        QVERIFY(near(*model.layers[0].outlierForwardNs, 200'000));
        QVERIFY(near(model.layers[0].forwardNs, 12'000));
        for (std::size_t k = 1; k < 5; ++k)
            QVERIFY(!model.layers[k].outlierForwardNs && !model.layers[k].outlierBackwardNs);
        QVERIFY(near(model.recomputeSpreadNs, 1'000)); // |10-12|, 0, 1, 1, |200-12| → median 1 us
        const Prediction all = predict(model, std::vector<bool>(5, true));
        QVERIFY(near(all.addedTimeNs, 12'000 + 10'000 + 12'000 + 11'000 + 13'000));
        QCOMPARE(all.addedTimeSpreadNs, 5 * model.recomputeSpreadNs);
        QVERIFY(timeOutlierNote(model).find("blocks.0's forward took 200") != std::string::npos);
    }

    // Real snapshots: the first step of a fresh process, its first block's forward a
    // warm-up, and the same run with its later steps, whose median times need no flag.
    void warmUpsInRealSnapshots_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("flagged");  // the chain layers whose forward was a warm-up
        QTest::addColumn<double>("mostAdded"); // "all": at most this share of the step
        QTest::addRow("the first step") << QStringLiteral("snapshot_cs336_first_step.pickle.gz")
                                        << QStringLiteral("profile_memory:40.TransformerLM:47[0]") << 0.30;
        QTest::addRow("three steps, medians over them")
            << QStringLiteral("snapshot_cs336_three_steps.pickle.gz") << QString() << 0.5;
    }

    void warmUpsInRealSnapshots()
    {
        QFETCH(QString, file);
        QFETCH(QString, flagged);
        QFETCH(double, mostAdded);
        const CostModel model = buildCostModel(*loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/real/" + file.toStdString()));
        QStringList outliers;
        for (const ChainLayer &layer : model.layers) {
            if (layer.outlierForwardNs)
                outliers << QString::fromStdString(layer.path);
        }
        QCOMPARE(outliers.join(QLatin1Char(' ')), flagged);
        const Prediction all = predict(model, std::vector<bool>(model.layers.size(), true));
        QVERIFY2(double(all.addedTimeNs) <= mostAdded * double(model.stepTimeNs),
                 qPrintable(QStringLiteral("+%1 ns on %2 ns").arg(all.addedTimeNs).arg(model.stepTimeNs)));
        QCOMPARE(timeOutlierNote(model).empty(), flagged.isEmpty());
        if (!flagged.isEmpty())
            QVERIFY(timeOutlierNote(model).find(flagged.toStdString()) != std::string::npos);
    }

    // A checkpoint adds its layer's forward time, unless the trace carries measured costs
    // for every chain layer (peaklens-replay's calibration steps).
    void measuredCheckpointCosts_data()
    {
        QTest::addColumn<QString>("meta");
        QTest::addColumn<bool>("measured");
        QTest::newRow("none") << QString() << false;
        QTest::newRow("every layer") << QStringLiteral(R"(meta checkpoint.costs {"blocks.0": 3, "blocks.1": 4})") << true;
        QTest::newRow("one layer missing") << QStringLiteral(R"(meta checkpoint.costs {"blocks.0": 3})") << false;
        QTest::newRow("not JSON") << QStringLiteral("meta checkpoint.costs {blocks.0: 3") << false;
    }
    void measuredCheckpointCosts()
    {
        QFETCH(QString, meta);
        QFETCH(bool, measured);
        const CostModel model = buildCostModel(*traceFrom(meta + QLatin1Char('\n') + chain(300, 100, 500, 50, 200, 100)));
        QCOMPARE(model.recomputeMeasured, measured);
        QCOMPARE(model.layers[0].recomputeNs, measured ? qint64(3) : model.layers[0].forwardNs);
        QCOMPARE(predict(model, {true, true}).addedTimeNs,
                 measured ? qint64(7) : model.layers[0].forwardNs + model.layers[1].forwardNs);
    }

    // The repeated blocks are the chain, not the numbered Linear, GELU, Linear inside
    // each block's MLP (deeper) nor a top-level Sequential of unlike parts.
    void theChainIsTheRepeatedBlocks_data()
    {
        QTest::addColumn<QString>("layers");
        QTest::addColumn<QString>("expected");
        QTest::newRow("blocks over a deeper numbered MLP") << QStringLiteral(
            "layer blocks.0 kind=Block\nlayer blocks.1 kind=Block\n"
            "layer blocks.0.mlp.0 kind=Linear\nlayer blocks.0.mlp.1 kind=GELU\nlayer blocks.0.mlp.2 kind=Linear\n")
                                                           << QStringLiteral("blocks.0,blocks.1");
        QTest::newRow("blocks inside a top-level Sequential")
            << QStringLiteral("layer 0 kind=Embedding\nlayer 1 kind=ModuleList\nlayer 2 kind=Linear\n"
                              "layer 1.blocks.0 kind=Block\nlayer 1.blocks.1 kind=Block\n")
            << QStringLiteral("1.blocks.0,1.blocks.1");
        QTest::newRow("Kineto's Class_N siblings") << QStringLiteral(
            "layer GPT_0.Embedding_0 kind=Embedding\nlayer GPT_0.Block_0 kind=Block\nlayer GPT_0.Block_1 kind=Block\n"
            "layer GPT_0.Block_2 kind=Block\nlayer GPT_0.Block_0.Linear_0 kind=Linear\nlayer GPT_0.Block_0.Linear_1 "
            "kind=Linear\n") << QStringLiteral("GPT_0.Block_0,GPT_0.Block_1,GPT_0.Block_2");
        QTest::newRow("no kinds: the most children") << QStringLiteral(
            "layer blocks.0\nlayer blocks.1\nlayer blocks.0.mlp.0\nlayer blocks.0.mlp.1\nlayer blocks.0.mlp.2\n")
                                                     << QStringLiteral("blocks.0.mlp.0,blocks.0.mlp.1,blocks.0.mlp.2");
    }

    void theChainIsTheRepeatedBlocks()
    {
        QFETCH(QString, layers);
        QFETCH(QString, expected);
        const auto trace = traceFrom(layers);
        std::string chain;
        for (std::uint32_t layer : defaultChain(*trace))
            chain += (chain.empty() ? "" : ",") + trace->layers[layer].path;
        QCOMPARE(QString::fromStdString(chain), expected);
    }

    // Traces imported without PeakLens's helper time no layer's backward: the model
    // estimates each from when its saved blocks are freed. Checked against a replay whose
    // backward ranges were recorded, with those ranges taken away.
    void estimatedBackwardAgreesWithRecordedRanges()
    {
        const auto recorded = loadTrace(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        Trace stripped = *recorded;
        std::erase_if(stripped.ranges, [](const Range &r) { return r.phase == Phase::Backward && r.layer != kNoLayer; });
        const CostModel truth = buildCostModel(*recorded);
        const CostModel estimate = buildCostModel(stripped);
        QVERIFY(!truth.backwardEstimated);
        QVERIFY(estimate.backwardEstimated);
        QCOMPARE(estimate.layers.size(), truth.layers.size());
        for (std::size_t k = 0; k < truth.layers.size(); ++k) {
            // Within a thousandth of the step of the recorded begin.
            QVERIFY2(std::abs(estimate.layers[k].backwardBeginsNs.front() - truth.layers[k].backwardBeginsNs.front())
                         < truth.stepTimeNs / 1000,
                     truth.layers[k].path.c_str());
        }
        for (std::size_t every : {1, 2, 3}) {
            std::vector<bool> checkpoint(truth.layers.size());
            for (std::size_t k = 0; k < checkpoint.size(); k += every)
                checkpoint[k] = true;
            const double truePeak = double(predict(truth, checkpoint).peakBytes);
            QVERIFY2(std::abs(double(predict(estimate, checkpoint).peakBytes) - truePeak) < 0.02 * truePeak,
                     qPrintable(QStringLiteral("every:%1").arg(every)));
        }
    }

    void refusesTracesWithoutAChain()
    {
        const auto trace = traceFrom(QStringLiteral("begin fwd:net\nalloc a 5\nend fwd:net\n"));
        QVERIFY_THROWS_EXCEPTION(Error, buildCostModel(*trace));
        ChainSelection selection;
        selection.layerPattern = "(";
        QVERIFY_THROWS_EXCEPTION(Error, buildCostModel(*traceFrom(chain(1, 1, 1, 1, 1, 1)), selection));
    }
};

QTEST_GUILESS_MAIN(tst_Predictor)
#include "tst_predictor.moc"
