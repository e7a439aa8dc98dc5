// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/plan/activationlist.h"
#include "core/plan/checkpointstrategy.h"
#include "core/plan/planner.h"
#include "core/plan/plannotes.h"
#include "core/plan/rerunlaunch.h"
#include "core/trace/tracetext.h"

#include <QFile>

using namespace peaklens;

namespace {

// Three blocks, each running layer_norm, addmm (with 50 KiB of scratch space), gelu,
// addmm and a residual add, 131 ms in all.
std::shared_ptr<const Trace> operatorStep()
{
    QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read operator-step.pltxt");
    return parseTraceText(file.readAll().toStdString());
}

CheckpointSchedule scheduleOf(const CostModel &model, const std::string &text)
{
    std::vector<std::string> chain;
    for (const ChainLayer &layer : model.layers)
        chain.push_back(layer.path);
    return CheckpointStrategy::parse(text).schedule(chain, chain);
}

const OperatorOutputs *outputsOf(const ChainLayer &layer, const std::string &op)
{
    for (const OperatorOutputs &outputs : layer.operators.outputs) {
        if (outputs.op == op)
            return &outputs;
    }
    return nullptr;
}

constexpr std::int64_t KiB = 1024;

} // namespace

class tst_OperatorProfile : public QObject
{
    Q_OBJECT

private slots:
    void operatorsAreNamedAsPyTorchPoliciesNameThem_data()
    {
        QTest::addColumn<QString>("written");
        QTest::addColumn<QString>("overload"); // empty: refused
        QTest::newRow("recorded, default overload") << QStringLiteral("aten::addmm") << QStringLiteral("aten.addmm.default");
        QTest::newRow("recorded, named overload") << QStringLiteral("aten::mul.Tensor") << QStringLiteral("aten.mul.Tensor");
        QTest::newRow("PyTorch's own") << QStringLiteral("aten.mm.default") << QStringLiteral("aten.mm.default");
        // A snapshot's C++ frames: at::_ops::mul_Tensor::call, at::_ops::add__Tensor (in place).
        QTest::newRow("dispatcher, named overload") << QStringLiteral("aten::mul_Tensor") << QStringLiteral("aten.mul.Tensor");
        QTest::newRow("dispatcher, in place") << QStringLiteral("aten::add__Tensor") << QStringLiteral("aten.add_.Tensor");
        QTest::newRow("dispatcher, two-part overload")
            << QStringLiteral("aten::div_Tensor_mode") << QStringLiteral("aten.div.Tensor_mode");
        QTest::newRow("underscores of the name")
            << QStringLiteral("aten::native_layer_norm") << QStringLiteral("aten.native_layer_norm.default");
        QTest::newRow("a leading underscore") << QStringLiteral("aten::_softmax") << QStringLiteral("aten._softmax.default");
        QTest::newRow("another namespace") << QStringLiteral("torchvision::nms") << QStringLiteral("torchvision.nms.default");
        // PyTorch matches a policy's operators by overload: a packet matches nothing.
        QTest::newRow("a packet") << QStringLiteral("aten.mm") << QString();
        QTest::newRow("too many parts") << QStringLiteral("aten.mm.default.x") << QString();
        QTest::newRow("no name") << QStringLiteral("aten::") << QString();
        QTest::newRow("spaces") << QStringLiteral("aten.m m.default") << QString();
        QTest::newRow("empty") << QString() << QString();
    }
    void operatorsAreNamedAsPyTorchPoliciesNameThem()
    {
        QFETCH(QString, written);
        QFETCH(QString, overload);
        QCOMPARE(test::qs(operatorOverload(written.toStdString())), overload);
    }

    // What no policy keeps: an in-place operator's output is its argument, and a factory's
    // block is filled in place by the operators after it.
    void policiesKeepNeitherInPlaceOperatorsNorFactories_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<bool>("kept");
        QTest::newRow("a matrix product") << QStringLiteral("aten.mm.default") << true;
        QTest::newRow("a leading underscore") << QStringLiteral("aten._softmax.default") << true;
        QTest::newRow("a named overload") << QStringLiteral("aten.mul.Tensor") << true;
        QTest::newRow("a dunder operator") << QStringLiteral("aten.__and__.Tensor") << true;
        QTest::newRow("in place") << QStringLiteral("aten.div_.Scalar") << false;
        QTest::newRow("in place, default overload") << QStringLiteral("aten.bernoulli_.float") << false;
        QTest::newRow("a factory") << QStringLiteral("aten.empty_like.default") << false;
        QTest::newRow("a factory of a tensor") << QStringLiteral("aten.new_empty.default") << false;
        QTest::newRow("not an overload") << QStringLiteral("aten.mm") << false;
        QTest::newRow("empty") << QString() << false;
    }
    void policiesKeepNeitherInPlaceOperatorsNorFactories()
    {
        QFETCH(QString, op);
        QFETCH(bool, kept);
        QCOMPARE(keptByPolicies(op.toStdString()), kept);
    }

    // A block counts for its operator when another operator allocated while it lived or
    // it outlived the forward; scratch space freed first and the layer's output do not.
    // Each operator's time runs from its allocation to the next operator's.
    void aForwardIsProfiledPerOperator()
    {
        const auto trace = operatorStep();
        const CostModel model = buildCostModel(*trace);
        QCOMPARE(model.layers.size(), std::size_t(3));
        const ChainLayer &layer = model.layers[1];
        QCOMPARE(layer.operators.spanNs, qint64(131'000'000));
        QStringList ops;
        for (const OperatorOutputs &outputs : layer.operators.outputs)
            ops << test::qs(outputs.op);
        QCOMPARE(ops, (QStringList{QStringLiteral("aten.add.Tensor"), QStringLiteral("aten.addmm.default"),
                                   QStringLiteral("aten.gelu.default"), QStringLiteral("aten.native_layer_norm.default")}));
        const OperatorOutputs *addmm = outputsOf(layer, "aten.addmm.default");
        QCOMPARE(addmm->bytes, 500 * KiB); // both projections, not the scratch space
        QCOMPARE(addmm->events.size(), std::size_t(2));
        QCOMPARE(addmm->ns, qint64(71'000'000 + 20'000'000));
        QCOMPARE(addmm->calls, 2u);
        QCOMPARE(layer.operators.calls, 5u);
        QCOMPARE(outputsOf(layer, "aten.gelu.default")->bytes, 400 * KiB);
        QCOMPARE(outputsOf(layer, "aten.gelu.default")->ns, qint64(10'000'000));
        QCOMPARE(outputsOf(layer, "aten.native_layer_norm.default")->ns, qint64(20'000'000));
        QCOMPARE(outputsOf(layer, "aten.add.Tensor")->bytes, qint64(0)); // the layer's output
        QCOMPARE(outputsOf(layer, "aten.add.Tensor")->ns, qint64(9'000'000));
        QCOMPARE(savedBytes(layer.operators, {"aten.addmm.default", "aten.gelu.default"}), 900 * KiB);
        QCOMPARE(savedNs(layer.operators, {"aten.addmm.default", "aten.gelu.default"}), qint64(101'000'000));
        QCOMPARE(savedBytes(layer.operators, {"aten.mm.default"}), qint64(0));
    }

    // A policy keeps its operators' outputs through the forward, the one the measured step
    // freed early included, and spares their share of the recompute, less its dispatch.
    void aPolicyKeepsItsOperatorsOutputsAndSparesTheirTime()
    {
        const auto trace = operatorStep();
        const CostModel model = buildCostModel(*trace);
        const Prediction whole = predict(model, scheduleOf(model, "blocks.1"));
        const Prediction selective = predict(model, scheduleOf(model, "blocks.1[save:aten.addmm.default]"));
        const Prediction plain = predict(model, CheckpointSchedule{});
        QVERIFY(whole.peakBytes < plain.peakBytes);
        QCOMPARE(selective.peakBytes - whole.peakBytes, 500 * KiB);
        QCOMPARE(whole.addedTimeNs, model.layers[1].recomputeNs);
        QCOMPARE(selective.addedTimeNs,
                 model.layers[1].recomputeNs - model.layers[1].recomputeNs * 91 / 131 + 5 * kSelectiveCallNs);
        // Saving every operator that leaves something keeps more than the plain step kept
        // (the early-freed projection), so the checkpoint is worse than none.
        const Prediction everything = predict(
            model, scheduleOf(model, "blocks.1[save:aten.addmm.default+aten.gelu.default+aten.native_layer_norm.default]"));
        QCOMPARE(everything.peakBytes - plain.peakBytes, 100 * KiB);
        // An operator the forward never runs changes nothing, and the notes say so.
        const CheckpointSchedule wrong = scheduleOf(model, "blocks.1[save:aten.mm.default]");
        QCOMPARE(predict(model, wrong).peakBytes, whole.peakBytes);
        const std::vector<std::string> notes = planNotes(model, wrong, predict(model, wrong));
        QVERIFY(std::any_of(notes.begin(), notes.end(), [](const std::string &note) {
            return note.starts_with(
                       "blocks.1's policy saves aten.mm.default, which its forward never runs: it saves nothing of it.")
                   && note.ends_with("Its forward runs aten.add.Tensor, aten.addmm.default, aten.gelu.default, "
                                     "aten.native_layer_norm.default.");
        }));
    }

    // Per layer the planner weighs the operators' leading runs, ranked by recompute spared
    // per byte kept: add (its only output is the layer's), layer_norm, addmm, gelu. Saving
    // the first three frees 300 KiB for 40 ms less 91 + 20 + 9 spared, plus their dispatch.
    void thePlannerWeighsPerOpPolicies()
    {
        const auto trace = operatorStep();
        const CostModel model = buildCostModel(*trace);
        const std::int64_t plain = predict(model, CheckpointSchedule{}).peakBytes;
        PlannerOptions options;
        const Plan layers = planForBudget(model, plain - 200 * KiB, options);
        QCOMPARE(strategyOf(model, layers).toString(), std::string("blocks.0"));
        options.perOpPolicies = true;
        const Plan perOp = planForBudget(model, plain - 200 * KiB, options);
        QCOMPARE(strategyOf(model, perOp).toString(),
                 std::string("blocks.0[save:aten.add.Tensor+aten.addmm.default+aten.native_layer_norm.default]"));
        QCOMPARE(perOp.prediction.addedTimeNs, qint64(131'000'000 - 120'000'000 + 5 * kSelectiveCallNs));
        QCOMPARE(perOp.prediction.peakBytes, plain - 300 * KiB);
        QVERIFY(perOp.prediction.addedTimeNs < layers.prediction.addedTimeNs);
    }

    // A layer keeping bfloat16 is no checkpoint: it frees half of what it keeps, adding no
    // recompute. Each block here also keeps its own output (out0, out1) until its own
    // backward: blocks.1's input, out0, stays on the device for blocks.0, and its own
    // output for itself and blocks.2, so each gains a half-size copy instead.
    void aLayerKeepingBfloat16FreesHalfWhatItKeeps()
    {
        const auto trace = operatorStep();
        const CostModel model = buildCostModel(*trace);
        const Prediction plain = predict(model, CheckpointSchedule{});
        QVERIFY(model.layers[0].outputKept);
        const CheckpointSchedule second = scheduleOf(model, "blocks.1[bf16]");
        QCOMPARE(second.front().kept, KeptForm::Bfloat16);
        QCOMPARE(toggledPositions(second, 3), (std::vector<bool>{false, false, false}));
        QCOMPARE(recomputeCounts(second, 3), (std::vector<std::size_t>{0, 0, 0}));
        const Prediction compressed = predict(model, second);
        QVERIFY(model.layers[0].outputSavedByItself && model.layers[1].outputSavedByItself);
        QCOMPARE(plain.peakBytes - compressed.peakBytes, (900 - 100 - 100) * KiB / 2);
        QCOMPARE(compressed.addedTimeNs, qint64(0));
        // The first layer's input comes from outside the chain: its own half, less the copy
        // of its output.
        QCOMPARE(plain.peakBytes - predict(model, scheduleOf(model, "blocks.0[bf16]")).peakBytes, (900 - 100) * KiB / 2);
        // Beside blocks.0 in bfloat16 too, out0 leaves the device: blocks.1 frees half of it
        // and blocks.0 gets its half-size copy.
        QCOMPARE(model.keptElsewhereSaving(1, KeptForm::Bfloat16, false), (900 + 100 - 100) * KiB / 2);
        QStringList rows;
        for (const KeptActivation &row : keptActivations(*trace, model, second)) {
            if (row.layer == "blocks.1")
                rows << test::qs(std::to_string(row.bytes / KiB) + " " + policyText(row) + " " + row.unit);
        }
        QCOMPARE(rows,
                 (QStringList{QStringLiteral("100 COMPRESS (bf16) blocks.1"), QStringLiteral("400 COMPRESS (bf16) blocks.1"),
                              QStringLiteral("400 COMPRESS (bf16) blocks.1"), QStringLiteral("100 SAVE, output ")}));
        // Its rerun's gradients may differ as bfloat16 rounds.
        QCOMPARE(gradientTolerance(second), kBfloat16GradientTolerance);
        QCOMPARE(gradientTolerance(scheduleOf(model, "blocks.1")), kGradientTolerance);
    }

    // An offloaded layer is no checkpoint: it frees all it keeps, and its input where it kept
    // that and the layer before does not, adding no recompute but the copies out and back
    // at the host's bandwidth.
    void anOffloadedLayerFreesWhatItKeepsAndCopiesIt()
    {
        const auto trace = operatorStep();
        CostModel model = buildCostModel(*trace);
        const Prediction plain = predict(model, CheckpointSchedule{});
        const CheckpointSchedule second = scheduleOf(model, "blocks.1[offload]");
        QCOMPARE(second.front().kept, KeptForm::Host);
        QCOMPARE(toggledPositions(second, 3), (std::vector<bool>{false, false, false}));
        QCOMPARE(recomputeCounts(second, 3), (std::vector<std::size_t>{0, 0, 0}));
        const Prediction offloaded = predict(model, second);
        // The plain peak, blocks.2's backward allocating its gradient (3204 KiB), loses its
        // 900 KiB: its input, out0, stays for blocks.0's backward. Beside blocks.0 offloaded
        // too, out0 goes as well. In blocks.1's own backward (2300 KiB measured as it allocates its
        // gradient) only what the node running then releases is back: its 900 KiB, not its
        // input, which blocks.0's backward releases.
        QCOMPARE(plain.peakBytes, 3204 * KiB);
        QCOMPARE(offloaded.peakBytes, (3204 - 900) * KiB);
        QCOMPARE(model.keptElsewhereSaving(1, KeptForm::Host, false), 1000 * KiB);
        QCOMPARE(model.layers[1].backwardLevelPeakBytes, 2300 * KiB);
        QCOMPARE(model.layers[1].offloadedBackwardPeakBytes, (2300 - 1000 + 900) * KiB);
        // A model without the walk's offloaded levels (built by hand) takes the measured ones.
        CostModel bare = model;
        bare.offloadedForwardPeakBytes.clear();
        bare.offloadedForwardPeakPoint.clear();
        for (ChainLayer &layer : bare.layers)
            layer.offloadedBackwardPeakBytes = INT64_MIN;
        QCOMPARE(predict(bare, second).peakBytes, std::max((3204 - 900) * KiB, 2300 * KiB));
        // In its own forward, only what the operator running uses: at its measured top, as
        // it makes its output, ln1 and fc1 are away, and g1, the newest it keeps, is taken
        // to be still in use.
        const CurvePoint &forwardTop = model.curve[model.forwardPeakPoint[1]];
        QCOMPARE(forwardTop.bytes - forwardTop.bytesOffloaded(), 500 * KiB);
        std::int64_t atPlainPeak = 0;
        for (const SeriesPoint &point : predictCurve(model, second)) {
            if (point.timeNs <= plain.peakTimeNs)
                atPlainPeak = point.bytes;
        }
        QCOMPARE(atPlainPeak, (3204 - 900) * KiB);
        // 1000 KiB out and back at 25 GB/s: out0 is copied too.
        QCOMPARE(offloaded.addedTimeNs, qint64(2 * 1000 * KiB / 25));
        model.hostBandwidthBytesPerSecond = 1e9;
        QCOMPARE(predict(model, second).addedTimeNs, qint64(2 * 1000 * KiB));
        QStringList rows;
        for (const KeptActivation &row : keptActivations(*trace, model, second)) {
            if (row.layer == "blocks.1" && !row.output)
                rows << test::qs(std::to_string(row.bytes / KiB) + " " + policyText(row) + " " + row.unit);
        }
        QCOMPARE(rows, (QStringList{QStringLiteral("100 OFFLOAD (host) blocks.1"), QStringLiteral("400 OFFLOAD (host) blocks.1"),
                                    QStringLiteral("400 OFFLOAD (host) blocks.1")}));
        QCOMPARE(keptTotalsText(
                     keptTotals(keptActivations(*trace, model, scheduleOf(model, "blocks.0,blocks.1[offload],blocks.2[bf16]")))),
                 std::string("the plan recomputes 900.0 KiB of it, packs 900.0 KiB to bfloat16 and offloads 900.0 KiB"));
        QCOMPARE(keptTotalsText(keptTotals(keptActivations(*trace, model, second))),
                 std::string("the plan recomputes 0 B of it and offloads 900.0 KiB"));
        // A lossless copy: gradients are held to float rounding.
        QCOMPARE(gradientTolerance(second), kGradientTolerance);
        // The planner weighs it when asked: at 25 GB/s it beats every recompute; at 1 MB/s
        // (2 s) it loses to them.
        model.hostBandwidthBytesPerSecond = kHostBandwidthBytesPerSecond;
        PlannerOptions options;
        options.offload = true;
        const Plan plan = planForBudget(model, plain.peakBytes - 200 * KiB, options);
        QCOMPARE(strategyOf(model, plan).toString(), std::string("blocks.0[offload]"));
        QCOMPARE(plan.prediction.addedTimeNs, qint64(2 * 900 * KiB / 25));
        model.hostBandwidthBytesPerSecond = 1e6;
        QCOMPARE(strategyOf(model, planForBudget(model, plain.peakBytes - 200 * KiB, options)).toString(),
                 std::string("blocks.0"));
    }

    void theActivationListShowsWhatAPolicySaves()
    {
        const auto trace = operatorStep();
        const CostModel model = buildCostModel(*trace);
        QStringList rows;
        for (const KeptActivation &row : keptActivations(*trace, model, scheduleOf(model, "blocks.1[save:aten.addmm.default]"))) {
            if (row.layer == "blocks.1")
                rows << test::qs(row.op + " " + std::to_string(row.bytes / KiB) + " " + policyText(row));
        }
        QCOMPARE(rows, (QStringList{QStringLiteral("aten::native_layer_norm 100 RECOMPUTE (blocks.1)"),
                                    QStringLiteral("aten::addmm 400 SAVE (blocks.1's policy)"),
                                    QStringLiteral("aten::gelu 400 RECOMPUTE (blocks.1)"),
                                    QStringLiteral("aten::add.Tensor 100 SAVE, output"),
                                    QStringLiteral("aten::addmm 100 SAVE (blocks.1's policy)")}));
    }
};

QTEST_GUILESS_MAIN(tst_OperatorProfile)
#include "tst_operatorprofile.moc"
