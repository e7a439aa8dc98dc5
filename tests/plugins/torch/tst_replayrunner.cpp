// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/error.h"
#include "core/format/tracereader.h"
#include "core/plan/checkpointstrategy.h"
#include "core/plan/costmodel.h"
#include "core/plan/planner.h"
#include "core/trace/metadata.h"
#include "plugins/torch/calibrationrounds.h"
#include "plugins/torch/checkpointfunction.h"
#include "plugins/torch/replayrunner.h"

#include <QFile>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>
#include <torch/cuda.h>

using namespace peaklens;
using namespace peaklens::replay;
using test::qs;
using test::ss;

namespace {

// Small enough to run in a moment, large enough that saved activations dominate memory.
ModelSpec smallSpec(const QString &model, double dropout = 0.1)
{
    nlohmann::json object;
    if (model == QStringLiteral("gpt"))
        object = {{"model", "gpt"}, {"layers", 3}, {"d_model", 32}, {"heads", 2}, {"seq", 64}, {"batch", 8}, {"vocab", 64}};
    else if (model == QStringLiteral("mlp"))
        object = {{"model", "mlp"}, {"layers", 3}, {"d_model", 64}, {"batch", 512}, {"classes", 5}};
    else
        object = {{"model", "cnn"}, {"layers", 3}, {"channels", 8}, {"image", 16}, {"batch", 8}, {"classes", 5}};
    object["dropout"] = dropout;
    return parseModelSpec(object, "test", ".");
}

RunResult run(const ModelSpec &spec, const std::string &checkpoint, int steps = 2, int warmup = 1)
{
    RunOptions options;
    options.checkpoint = checkpoint;
    options.steps = steps;
    options.warmupSteps = warmup;
    options.device = DeviceChoice::Cpu;
    options.keepGradients = true;
    return runReplay(spec, options);
}

// The gradients of the first step, from the same parameters, batch and seed.
std::vector<torch::Tensor> firstGradients(const ModelSpec &spec, const std::string &checkpoint)
{
    return run(spec, checkpoint, 1, 0).gradients;
}

void compareGradients(const std::vector<torch::Tensor> &plain, const std::vector<torch::Tensor> &checkpointed)
{
    QCOMPARE(checkpointed.size(), plain.size());
    QVERIFY(!plain.empty());
    for (std::size_t i = 0; i < plain.size(); ++i) {
        QVERIFY2(plain[i].defined(), "a parameter got no gradient");
        QVERIFY2(checkpointed[i].defined(), "a parameter got no gradient with checkpointing");
        QVERIFY2(torch::allclose(checkpointed[i], plain[i], /*rtol=*/1e-5, /*atol=*/1e-8),
                 qPrintable(QStringLiteral("parameter %1 differs by up to %2")
                                .arg(i)
                                .arg((checkpointed[i] - plain[i]).abs().max().item<double>())));
    }
}

bool sameGradients(const std::vector<torch::Tensor> &a, const std::vector<torch::Tensor> &b)
{
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!torch::equal(a[i], b[i]))
            return false;
    }
    return true;
}

} // namespace

class tst_ReplayRunner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void gradientsEqualWithCheckpointing_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("checkpoint");
        for (const char *model : {"gpt", "mlp", "cnn"}) {
            QTest::addRow("%s, all", model) << QString::fromLatin1(model) << QStringLiteral("all");
            QTest::addRow("%s, every:2", model) << QString::fromLatin1(model) << QStringLiteral("every:2");
        }
        QTest::addRow("gpt, embedding and head too") << QStringLiteral("gpt") << QStringLiteral("embed,blocks.1,ln_f,head");
    }

    // With dropout on, equal gradients need the recompute to draw the forward's random numbers.
    void gradientsEqualWithCheckpointing()
    {
        QFETCH(QString, model);
        QFETCH(QString, checkpoint);
        const ModelSpec spec = smallSpec(model);
        compareGradients(firstGradients(spec, "none"), firstGradients(spec, ss(checkpoint)));
    }

    // Guards the test above: dropout really changes the gradients, so equality is not free.
    void dropoutChangesGradients()
    {
        const auto with = firstGradients(smallSpec(QStringLiteral("gpt"), 0.1), "none");
        const auto without = firstGradients(smallSpec(QStringLiteral("gpt"), 0.0), "none");
        QVERIFY(!sameGradients(with, without));
        QVERIFY(sameGradients(with, firstGradients(smallSpec(QStringLiteral("gpt"), 0.1), "none")));
    }

    void torchScriptGradientsEqual()
    {
        if (QStringLiteral(PEAKLENS_PYTHON).isEmpty())
            QSKIP("no PEAKLENS_PYTHON: the TorchScript blocks are exported with the project's PyTorch");
        QTemporaryDir directory;
        QProcess exporter;
        exporter.start(QStringLiteral(PEAKLENS_PYTHON), {QStringLiteral(PEAKLENS_EXPORT_BLOCKS), directory.path()});
        QVERIFY2(exporter.waitForFinished(120000) && exporter.exitCode() == 0,
                 qPrintable(QStringLiteral("exporting TorchScript blocks with the project's PyTorch failed: ")
                            + QString::fromLocal8Bit(exporter.readAllStandardError())));
        const ModelSpec spec = readModelSpec(ss(directory.filePath(QStringLiteral("spec.json"))));
        QCOMPARE(spec.blocks.size(), std::size_t(4));
        const auto plain = firstGradients(spec, "none");
        compareGradients(plain, firstGradients(spec, "all"));
        compareGradients(plain, firstGradients(spec, "blocks.1"));
    }

    // A spec naming its last block "head": the replay's chain and the planner's are the
    // numbered blocks, so "all" names the same layers in both.
    void torchScriptChainIsThePlansChain()
    {
        if (QStringLiteral(PEAKLENS_PYTHON).isEmpty())
            QSKIP("no PEAKLENS_PYTHON: the TorchScript blocks are exported with the project's PyTorch");
        QTemporaryDir directory;
        QProcess exporter;
        exporter.start(QStringLiteral(PEAKLENS_PYTHON),
                       {QStringLiteral(PEAKLENS_EXPORT_BLOCKS), directory.path(), QStringLiteral("--head")});
        QVERIFY2(exporter.waitForFinished(120000) && exporter.exitCode() == 0, exporter.readAllStandardError().constData());
        const ModelSpec spec = readModelSpec(ss(directory.filePath(QStringLiteral("spec.json"))));
        QCOMPARE(qs(spec.blocks.back().name), QStringLiteral("head"));
        const RunResult all = run(spec, "all");
        const CostModel model = buildCostModel(*all.trace);
        QCOMPARE(chainPaths(model), (std::vector<std::string>{"blocks.0", "blocks.1", "blocks.2"}));
        QCOMPARE(all.checkpoint, toggles(model, planForStrategy(model, "all")));
        QCOMPARE(all.trace->metaValue(metakey::Checkpoint), std::string("blocks.0,blocks.1,blocks.2"));
    }

    // What each round of the calibration added, per layer: the median is the cost, the
    // farthest round its spread, and rounds whose totals stray by a quarter disagree.
    void calibrationRounds()
    {
        std::vector<Range> plain, checkpointed;
        const std::vector<std::int64_t> added{100, 104, 160};
        for (std::int64_t round = 0; round < 3; ++round) {
            plain.push_back({7, Phase::Forward, round, 0, 50, 0});
            plain.push_back({7, Phase::Backward, round, 100, 150, 0});
            checkpointed.push_back({7, Phase::Forward, round, 0, 50, 0});
            checkpointed.push_back({7, Phase::Backward, round, 100, 150 + added[round], 0});
        }
        const auto rounds = addedPerRound(plain, checkpointed, {7, 8});
        QCOMPARE(rounds[0], added);
        QVERIFY(rounds[1].empty()); // timed in neither
        const auto cost = calibratedCost(rounds[0]);
        QVERIFY(cost.has_value());
        QCOMPARE(cost->ns, std::int64_t(104));
        QCOMPARE(cost->spreadNs, std::int64_t(56));
        QVERIFY(roundsDisagree(rounds)); // 160 is more than a quarter off 104
        QVERIFY(!roundsDisagree({{100, 104, 110}}));
        QCOMPARE(calibratedCost({-30, -10, 5})->ns, std::int64_t(0)); // a cost is never negative
    }

    void checkpointingAllLowersThePeak_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addRow("gpt") << QStringLiteral("gpt");
        QTest::addRow("mlp") << QStringLiteral("mlp");
        QTest::addRow("cnn") << QStringLiteral("cnn");
    }

    void checkpointingAllLowersThePeak()
    {
        QFETCH(QString, model);
        const RunResult none = run(smallSpec(model), "none");
        const RunResult all = run(smallSpec(model), "all");
        QVERIFY(none.peakAllocatedBytes && all.peakAllocatedBytes);
        QVERIFY2(*all.peakAllocatedBytes < *none.peakAllocatedBytes,
                 qPrintable(QStringLiteral("all %1, none %2").arg(*all.peakAllocatedBytes).arg(*none.peakAllocatedBytes)));
    }

    void moreTogglesNeverRaiseThePeak()
    {
        nlohmann::json object = smallSpec(QStringLiteral("gpt")).toJson();
        object["layers"] = 5;
        const ModelSpec spec = parseModelSpec(object, "test", ".");
        std::int64_t previous = *run(spec, "none").peakAllocatedBytes;
        std::string toggles;
        for (int i = 0; i < 5; ++i) {
            toggles += (toggles.empty() ? "" : ",") + std::string("blocks.") + std::to_string(i);
            const std::int64_t peak = *run(spec, toggles).peakAllocatedBytes;
            QVERIFY2(peak <= previous, qPrintable(QStringLiteral("%1: %2 > %3").arg(qs(toggles)).arg(peak).arg(previous)));
            previous = peak;
        }
    }

    void traceDescribesTheMeasuredSteps()
    {
        const RunResult result = run(smallSpec(QStringLiteral("gpt")), "blocks.1", 3, 2);
        const Trace &trace = *result.trace;
        QCOMPARE(trace.steps.size(), std::size_t(3));
        QCOMPARE(trace.steps.front().number, 2); // after the two warm-up steps
        for (const char *path : {"embed", "blocks", "blocks.0", "blocks.2", "ln_f", "head", "loss"})
            QVERIFY2(trace.findLayer(path), path);
        const std::uint32_t block = *trace.findLayer("blocks.2");
        QCOMPARE(qs(trace.layers[block].kind), QStringLiteral("GPTBlock"));
        QVERIFY(trace.layers[block].parameterBytes > 0);
        for (const Step &step : trace.steps) {
            int forward = 0, backward = 0;
            for (const Range &range : trace.ranges) {
                if (range.layer == block && range.step == step.number) {
                    forward += range.phase == Phase::Forward;
                    backward += range.phase == Phase::Backward;
                    QVERIFY(range.beginNs >= step.beginNs && range.endNs <= step.endNs);
                }
            }
            QCOMPARE(forward, 1);
            QCOMPARE(backward, 1);
        }
        // Every block the trace frees was allocated in it: the warm-up state opens the trace.
        std::int64_t live = 0;
        for (std::size_t i = 0; i < trace.events.size(); ++i) {
            live += trace.events.deltaBytes(i);
            QVERIFY(live >= 0);
        }
        QCOMPARE(qs(trace.metaValue("checkpoint")), QStringLiteral("blocks.1"));
        QCOMPARE(qs(nlohmann::json::parse(trace.metaValue("replay.spec")).dump()), qs(result.spec.toJson().dump()));
        QCOMPARE(nlohmann::json::parse(trace.metaValue("replay.result"))["peak_allocated_bytes"].get<std::int64_t>(),
                 *result.peakAllocatedBytes);

        int categories[kCategoryCount] = {};
        for (std::size_t i = 0; i < trace.events.size(); ++i)
            ++categories[static_cast<int>(trace.events.category(i))];
        for (Category category : {Category::Parameter, Category::Input, Category::Activation, Category::Gradient,
                                  Category::OptimizerState, Category::Temporary})
            QVERIFY2(categories[static_cast<int>(category)] > 0, categoryName(category).data());
    }

    // The replayed trace's peak is the counting allocator's, and the planner's prediction
    // for checkpointing everything lands close to what a rerun measures.
    void tracePredictsTheRerun()
    {
        const ModelSpec spec = smallSpec(QStringLiteral("gpt"));
        const RunResult none = run(spec, "none");
        const CostModel model = buildCostModel(*none.trace);
        QCOMPARE(model.layers.size(), std::size_t(3));
        QCOMPARE(qs(model.layers[0].path), QStringLiteral("blocks.0"));
        QCOMPARE(model.measuredPeakBytes, *none.peakAllocatedBytes);

        const Plan all = planForStrategy(model, "all");
        const RunResult measured = run(spec, "all");
        const double error = static_cast<double>(all.prediction.peakBytes - *measured.peakAllocatedBytes)
                             / static_cast<double>(*measured.peakAllocatedBytes);
        QVERIFY2(
            std::abs(error) < 0.03,
            qPrintable(
                QStringLiteral("predicted %1, measured %2").arg(all.prediction.peakBytes).arg(*measured.peakAllocatedBytes)));
    }

    // A unit run plainly keeping what it saves in bfloat16 or in host memory, or checkpointed
    // with a per-op policy: the replay measures the peak the planner predicted from the
    // plain run's trace, and the gradients stay the plain step's (to the bit with a per-op
    // policy, to float rounding offloaded, within bfloat16's 1 % kept in bfloat16).
    void policiesArePredictedAndMeasured_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<double>("gradientTolerance");
        QTest::addRow("gpt, one block in bfloat16") << QStringLiteral("gpt") << QStringLiteral("blocks.1[bf16]") << 1e-2;
        QTest::addRow("gpt, one block offloaded") << QStringLiteral("gpt") << QStringLiteral("blocks.1[offload]") << 1e-5;
        QTest::addRow("gpt, every block offloaded")
            << QStringLiteral("gpt") << QStringLiteral("blocks.0[offload],blocks.1[offload],blocks.2[offload]") << 1e-5;
        QTest::addRow("gpt, mixed with a checkpoint")
            << QStringLiteral("gpt") << QStringLiteral("blocks.0,blocks.1[offload],blocks.2[bf16]") << 1e-2;
        QTest::addRow("mlp, a layer offloaded") << QStringLiteral("mlp") << QStringLiteral("layers.1[offload]") << 1e-5;
        // Its input and output stay for the blocks around it (their ReLU and convolution
        // save them), so keeping them in bfloat16 adds copies; BatchNorm's small
        // gradients lose more than 1 % to bfloat16.
        QTest::addRow("cnn, a block in bfloat16") << QStringLiteral("cnn") << QStringLiteral("blocks.1[bf16]") << 5e-2;
        QTest::addRow("cnn, a block offloaded") << QStringLiteral("cnn") << QStringLiteral("blocks.1[offload]") << 1e-5;
        QTest::addRow("gpt, a block saving its softmax")
            << QStringLiteral("gpt") << QStringLiteral("blocks.1[save:aten._softmax.default]") << 0.0;
        // A linear layer adds its bias to its matrix product in place: the recompute does
        // not add it to the kept product again.
        QTest::addRow("gpt, a block saving its matrix products")
            << QStringLiteral("gpt") << QStringLiteral("blocks.1[save:aten.mm.default]") << 0.0;
        QTest::addRow("gpt, per-op beside a whole block and an offload")
            << QStringLiteral("gpt")
            << QStringLiteral("blocks.0[save:aten.gelu.default+aten.mm.default],blocks.1,blocks.2[offload]") << 1e-5;
        // Dropout's mask is aten.empty_like's block, filled in place: no policy keeps it.
        QTest::addRow("gpt, a policy naming a factory keeps nothing")
            << QStringLiteral("gpt") << QStringLiteral("blocks.1[save:aten.empty_like.default]") << 0.0;
        QTest::addRow("cnn, a block saving its convolutions")
            << QStringLiteral("cnn") << QStringLiteral("blocks.1[save:aten.convolution.default]") << 0.0;
    }
    void policiesArePredictedAndMeasured()
    {
        QFETCH(QString, model);
        QFETCH(QString, checkpoint);
        QFETCH(double, gradientTolerance);
        // Larger than smallSpec's: what a layer saves dominates the bookkeeping around it.
        nlohmann::json object = smallSpec(model, 0).toJson();
        if (model == QStringLiteral("gpt"))
            object.update({{"d_model", 128}, {"heads", 4}, {"seq", 128}, {"vocab", 512}});
        else if (model == QStringLiteral("mlp"))
            object.update({{"d_model", 256}, {"batch", 1024}});
        else
            object.update({{"channels", 32}, {"image", 32}, {"batch", 16}});
        const ModelSpec spec = parseModelSpec(object, "test", ".");
        const RunResult none = run(spec, "none");
        const CostModel costModel = buildCostModel(*none.trace);
        const auto units = CheckpointStrategy::parse(ss(checkpoint)).unitTexts();
        const Plan plan = planForToggles(costModel, units);
        QVERIFY(plan.prediction.peakBytes < costModel.measuredPeakBytes);
        const RunResult measured = run(spec, ss(checkpoint));
        QCOMPARE(measured.checkpoint, units);
        const double error = static_cast<double>(plan.prediction.peakBytes - *measured.peakAllocatedBytes)
                             / static_cast<double>(*measured.peakAllocatedBytes);
        QVERIFY2(
            std::abs(error) < 0.03,
            qPrintable(
                QStringLiteral("predicted %1, measured %2").arg(plan.prediction.peakBytes).arg(*measured.peakAllocatedBytes)));
        const auto plain = firstGradients(spec, "none"), kept = firstGradients(spec, ss(checkpoint));
        QCOMPARE(kept.size(), plain.size());
        bool differs = false;
        for (std::size_t i = 0; i < plain.size(); ++i) {
            const double scale = plain[i].abs().max().item<double>();
            const double difference = (kept[i] - plain[i]).abs().max().item<double>();
            QVERIFY2(difference <= gradientTolerance * scale,
                     qPrintable(QStringLiteral("parameter %1 differs by %2 of %3").arg(i).arg(difference).arg(scale)));
            differs = differs || difference > 0;
        }
        // Kept in bfloat16 is lossy: its gradients are not the plain step's to the bit.
        QCOMPARE(differs, gradientTolerance > 1e-5);
    }

    // bf16 autocast keeps the matmul outputs in half the bytes.
    void bf16AutocastLowersThePeak()
    {
        RunOptions options;
        options.device = DeviceChoice::Cpu;
        options.steps = 1;
        options.warmupSteps = 1;
        const RunResult fp32 = runReplay(smallSpec(QStringLiteral("gpt")), options);
        options.bf16 = true;
        const RunResult bf16 = runReplay(smallSpec(QStringLiteral("gpt")), options);
        QCOMPARE(qs(bf16.dtype), QStringLiteral("bf16"));
        QVERIFY2(*bf16.peakAllocatedBytes < *fp32.peakAllocatedBytes,
                 qPrintable(QStringLiteral("bf16 %1, fp32 %2").arg(*bf16.peakAllocatedBytes).arg(*fp32.peakAllocatedBytes)));
    }

    // Gradient accumulation: every micro-batch runs each layer's forward and backward.
    void microBatchesRunEachLayerPerMicroBatch()
    {
        RunOptions options;
        options.device = DeviceChoice::Cpu;
        options.steps = 1;
        options.warmupSteps = 1;
        options.microBatches = 3;
        const RunResult result = runReplay(smallSpec(QStringLiteral("gpt")), options);
        const Trace &trace = *result.trace;
        const std::uint32_t block = *trace.findLayer("blocks.1");
        int forward = 0, backward = 0, optimizer = 0;
        for (const Range &range : trace.ranges) {
            forward += range.layer == block && range.phase == Phase::Forward;
            backward += range.layer == block && range.phase == Phase::Backward;
            optimizer += range.phase == Phase::Optimizer;
        }
        QCOMPARE(forward, 3);
        QCOMPARE(backward, 3);
        QCOMPARE(optimizer, 1); // one optimizer step for the three
        QCOMPARE(nlohmann::json::parse(trace.metaValue("replay.options"))["micro_batches"].get<int>(), 3);
    }

    // --out streams the trace as the run goes; the finished file holds what the run hands
    // back, baseline steps left out, an out-of-memory step and its marker kept.
    void streamedFileHoldsTheTrace_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("baseline");
        QTest::addColumn<int>("microBatches");
        QTest::addColumn<qint64>("limit");
        QTest::newRow("plain") << QStringLiteral("none") << QString() << 1 << qint64(0);
        QTest::newRow("toggled, baseline beside") << QStringLiteral("blocks.1") << QStringLiteral("none") << 1 << qint64(0);
        QTest::newRow("micro-batches") << QStringLiteral("all") << QString() << 2 << qint64(0);
        QTest::newRow("out of memory") << QStringLiteral("none") << QString() << 1 << qint64(1 << 20);
    }

    void streamedFileHoldsTheTrace()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, baseline);
        QFETCH(int, microBatches);
        QFETCH(qint64, limit);
        QTemporaryDir directory;
        RunOptions options;
        options.checkpoint = ss(checkpoint);
        if (!baseline.isEmpty())
            options.baseline = ss(baseline);
        options.steps = 3;
        options.warmupSteps = 1;
        options.microBatches = microBatches;
        options.calibrationSteps = 1;
        options.device = DeviceChoice::Cpu;
        options.memoryLimitBytes = limit ? std::optional<std::int64_t>(limit) : std::nullopt;
        options.out = ss(directory.filePath(QStringLiteral("run.peaklens")));
        const RunResult result = runReplay(smallSpec(QStringLiteral("gpt")), options);
        QCOMPARE(bool(result.oom), limit != 0);

        Trace read = *TraceReader::read(options.out);
        QCOMPARE(qs(read.metaValue(metakey::WriterState)), QStringLiteral("finished"));
        read.meta.erase(std::string(metakey::WriterState));
        read.meta.erase(std::string(metakey::WriterProcess));
        QVERIFY(read == *result.trace);
        QVERIFY(!QFile::exists(qs(options.out) + QStringLiteral("-wal")));
        // What the run fails beyond, on a CPU: the capacity a reader warns against.
        const std::int64_t capacity = std::stoll(read.metaValue(metakey::DeviceMemory));
        QVERIFY(limit ? capacity == limit : capacity > 0);
    }

    void outOfMemoryIsAResult()
    {
        RunOptions options;
        options.device = DeviceChoice::Cpu;
        options.memoryLimitBytes = 1 << 20;
        const RunResult result = runReplay(smallSpec(QStringLiteral("gpt")), options);
        QVERIFY(result.oom);
        QVERIFY(!result.oom->layer.empty());
        QVERIFY(result.oom->requestedBytes > 0);
        QVERIFY2(qs(result.oom->message).startsWith(QStringLiteral("out of memory in ")), result.oom->message.c_str());
        QCOMPARE(result.trace->markers.size(), std::size_t(1));
        QCOMPARE(result.trace->markers[0].kind, MarkerKind::OutOfMemory);
        QCOMPARE(result.trace->markers[0].bytes, result.oom->requestedBytes);
        // Where memory ran out survives the result's JSON, as the app and the CLI read it.
        const ReplayResult back = ReplayResult::fromJson(replayResultOf(result).toJson(), "the run");
        QVERIFY(back.oom);
        QCOMPARE(qs(back.oom->layer), qs(result.oom->layer));
        QCOMPARE(back.oom->phase, result.oom->phase);
        QCOMPARE(back.oom->step, result.oom->step);
        QCOMPARE(back.oom->requestedBytes, result.oom->requestedBytes);
        QCOMPARE(qs(back.outOfMemory()), qs(result.oom->message));
    }

    // A policy keeping a random operator's output: the recompute returns it without drawing
    // again, and leaves the generator where the forward's call left it, so a random operator
    // after it that is recomputed draws what it drew in the forward; the gradients are the
    // plain step's to the bit. Without the generator restored, randn_like would draw anew.
    void aKeptRandomOperatorLeavesTheGeneratorAsItsCallDid()
    {
        const torch::Tensor w = torch::full({64}, 0.5, torch::requires_grad());
        Stage stage{"blocks.0",
                    "Block",
                    true,
                    [w](const torch::Tensor &x) {
                        const torch::Tensor kept = torch::rand_like(x); // drawn first, then randn_like
                        const torch::Tensor recomputed = torch::randn_like(x);
                        return x * kept * w + recomputed * w;
                    },
                    {w},
                    {},
                    {},
                    {}};
        const std::vector<Stage> stages{stage};
        const torch::Tensor input = torch::linspace(-1, 1, 64).requires_grad_();
        const auto gradients = [&](const CheckpointUnit *unit) {
            w.mutable_grad() = torch::Tensor();
            const torch::Tensor x = input.detach().clone().requires_grad_();
            torch::manual_seed(7);
            const StageMarks marks{[](std::size_t) {}, [] {}, [](std::size_t) {}};
            const torch::Tensor y = unit ? runCheckpointed(stages, *unit, x, marks) : stages[0].forward(x);
            y.sum().backward();
            return std::pair(x.grad().clone(), w.grad().clone());
        };
        const auto plain = gradients(nullptr);
        CheckpointUnit unit{0, 0, {}, kWholeLayer, {"aten.rand_like.default"}, KeptForm::AsMade};
        const auto kept = gradients(&unit);
        QVERIFY(torch::equal(kept.first, plain.first));
        QVERIFY(torch::equal(kept.second, plain.second));
    }

    void resolveCheckpoint_data()
    {
        QTest::addColumn<QString>("argument");
        QTest::addColumn<QString>("expected"); // toggled stages of gpt with 5 blocks
        QTest::addRow("none") << QStringLiteral("none") << QStringLiteral("none");
        QTest::addRow("all") << QStringLiteral("all") << QStringLiteral("blocks.0,blocks.1,blocks.2,blocks.3,blocks.4");
        QTest::addRow("every:2") << QStringLiteral("every:2") << QStringLiteral("blocks.0,blocks.2,blocks.4");
        QTest::addRow("sqrt") << QStringLiteral("sqrt") << QStringLiteral("blocks.0..blocks.2");
        QTest::addRow("segments:2") << QStringLiteral("segments:2") << QStringLiteral("blocks.0..blocks.1,blocks.2..blocks.3");
        QTest::addRow("names") << QStringLiteral("head, blocks.1") << QStringLiteral("blocks.1,head");
        QTest::addRow("nested") << QStringLiteral("embed..blocks.3(embed,blocks.1..blocks.2)")
                                << QStringLiteral("embed..blocks.3(embed,blocks.1..blocks.2)");
    }

    void resolveCheckpoint()
    {
        QFETCH(QString, argument);
        QFETCH(QString, expected);
        nlohmann::json object = smallSpec(QStringLiteral("gpt")).toJson();
        object["layers"] = 5;
        const auto model = buildModel(parseModelSpec(object, "test", "."), torch::kCPU);
        const CheckpointSchedule schedule = replay::resolveCheckpoint(model->stages(), ss(argument));
        std::vector<std::string> paths;
        for (const Stage &stage : model->stages())
            paths.push_back(stage.path);
        QCOMPARE(qs(CheckpointStrategy::of(schedule, paths).toString()), expected);
    }

    void unknownCheckpointNames_data()
    {
        QTest::addColumn<QString>("argument");
        QTest::addRow("no such block") << QStringLiteral("blocks.9");
        QTest::addRow("every:0") << QStringLiteral("every:0");
        QTest::addRow("loss is not a stage") << QStringLiteral("loss");
    }

    void unknownCheckpointNames()
    {
        QFETCH(QString, argument);
        const auto model = buildModel(smallSpec(QStringLiteral("gpt")), torch::kCPU);
        QVERIFY_THROWS_EXCEPTION(Error, replay::resolveCheckpoint(model->stages(), ss(argument)));
    }

    void cudaCheckpointingLowersThePeak()
    {
        if (!torch::cuda::is_available())
            QSKIP("no CUDA device; the CPU path of the same measurement is tested above");
        RunOptions options;
        options.device = DeviceChoice::Cuda;
        options.checkpoint = "none";
        const RunResult none = runReplay(smallSpec(QStringLiteral("gpt")), options);
        options.checkpoint = "all";
        const RunResult all = runReplay(smallSpec(QStringLiteral("gpt")), options);
        QVERIFY(*all.peakAllocatedBytes < *none.peakAllocatedBytes);
        QCOMPARE(qs(none.device), QStringLiteral("cuda:0"));
        QVERIFY(!none.trace->events.empty());
    }
};

QTEST_GUILESS_MAIN(tst_ReplayRunner)
#include "tst_replayrunner.moc"
