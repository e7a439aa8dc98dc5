// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/plan/batchscaling.h"
#include "core/plan/planner.h"
#include "plugins/torch/replayrunner.h"
#include "smallmodels.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace peaklens;
using namespace peaklens::replay;
using test::qs;

namespace {

ModelSpec specFor(const QString &model)
{
    return test::smallModel(model, model == QStringLiteral("gpt") ? 5 : model == QStringLiteral("mlp") ? 6 : 5);
}

} // namespace

// A plan made for a budget B, replayed with its memory limited to B, never runs out of
// memory: over budgets from the lowest reachable peak to the measured one, on each
// built-in model, with micro-batches and bf16.
class tst_BudgetGuarantee : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void plansHoldTheirBudget_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("microBatches");
        QTest::addColumn<bool>("bf16");
        for (const char *model : {"gpt", "mlp", "cnn"}) {
            QTest::addRow("%s", model) << QString::fromLatin1(model) << 1 << false;
            QTest::addRow("%s, 2 micro-batches", model) << QString::fromLatin1(model) << 2 << false;
        }
        QTest::addRow("gpt, bf16") << QStringLiteral("gpt") << 1 << true;
    }
    void plansHoldTheirBudget()
    {
        QFETCH(QString, model);
        QFETCH(int, microBatches);
        QFETCH(bool, bf16);
        const ModelSpec spec = specFor(model);
        const RunResult baseline = test::replaySteps(spec, "none", microBatches, bf16);
        const CostModel costs = buildCostModel(*baseline.trace);
        QCOMPARE(costs.passes, std::size_t(microBatches));
        const std::int64_t measured = *baseline.peakAllocatedBytes;
        const std::int64_t lowest = lowestPeakPlan(costs).prediction.peakBytes;
        QVERIFY2(lowest < measured * 9 / 10, "checkpointing lowers the peak by less than 10 %");

        constexpr int kBudgets = 8;
        int feasible = 0;
        for (int i = 0; i < kBudgets; ++i) {
            const std::int64_t budget = lowest + (measured - lowest) * i / (kBudgets - 1);
            const Plan plan = planForBudget(costs, budget);
            if (!plan.feasible)
                continue;
            ++feasible;
            const std::string toggles = strategyOf(costs, plan).toString();
            const RunResult limited = test::replaySteps(spec, toggles, microBatches, bf16, budget);
            const QString what =
                QStringLiteral("budget %1 (%2 of the way from the lowest peak %3 to the measured %4), checkpoint %5")
                    .arg(budget)
                    .arg(i)
                    .arg(lowest)
                    .arg(measured)
                    .arg(qs(toggles));
            QVERIFY2(!limited.oom, qPrintable(what + QStringLiteral(": ") + qs(limited.oom ? limited.oom->message : "")));
            QVERIFY2(*limited.peakAllocatedBytes <= budget, qPrintable(what));
            // And the prediction is what the rerun measured: the plan has no margin to hide
            // an error in. Never low; high by a block at most (GPT's lowest plan: 64 KiB).
            const std::int64_t error = plan.prediction.peakBytes - *limited.peakAllocatedBytes;
            QVERIFY2(error >= 0 && error <= *limited.peakAllocatedBytes / 50,
                     qPrintable(what
                                + QStringLiteral(": predicted %1, measured %2")
                                      .arg(plan.prediction.peakBytes)
                                      .arg(*limited.peakAllocatedBytes)));
        }
        // The lowest reachable peak is a budget a plan meets; the measured peak one that
        // needs no checkpoint.
        QCOMPARE(feasible, kBudgets);
        QVERIFY(planForBudget(costs, measured).schedule.empty());
    }

    // Every part of the chain's last layer checkpointed on its own is predicted never low,
    // and to within 4 KiB (GPT's ln1 2 KiB high, the bf16 MLP's linear 128 bytes; the
    // CNN's to the byte): its backward runs where the step's peak is, with what its
    // checkpoint holds there, and the layer's forward after the part's own is lower by
    // what the part frees.
    void lastLayerPartsExact_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("bf16");
        for (const char *model : {"gpt", "mlp", "cnn"}) {
            QTest::addRow("%s", model) << QString::fromLatin1(model) << false;
            QTest::addRow("%s, bf16", model) << QString::fromLatin1(model) << true;
        }
    }
    void lastLayerPartsExact()
    {
        QFETCH(QString, model);
        QFETCH(bool, bf16);
        const ModelSpec spec = specFor(model);
        const RunResult baseline = test::replaySteps(spec, "none", 1, bf16);
        const CostModel costs = buildCostModel(*baseline.trace);
        const ChainLayer &last = costs.layers.back();
        QVERIFY(!last.parts.empty());
        for (const ChainPart &part : last.parts) {
            const Plan plan = planForStrategy(costs, part.path);
            const RunResult measured = test::replaySteps(spec, part.path, 1, bf16);
            const std::int64_t error = plan.prediction.peakBytes - *measured.peakAllocatedBytes;
            QVERIFY2(error >= 0 && error <= 4096 && (model != QStringLiteral("cnn") || error == 0),
                     qPrintable(qs(part.path)
                                + QStringLiteral(": predicted %1, measured %2")
                                      .arg(plan.prediction.peakBytes)
                                      .arg(*measured.peakAllocatedBytes)));
        }
    }

    // The largest batch predicted to fit a budget, replayed with its plan under that
    // memory limit, fits.
    void largestBatchFits_data()
    {
        QTest::addColumn<QString>("model");
        for (const char *model : {"gpt", "mlp", "cnn"})
            QTest::newRow(model) << QString::fromLatin1(model);
    }
    void largestBatchFits()
    {
        QFETCH(QString, model);
        const ModelSpec spec = specFor(model);
        const RunResult baseline = test::replaySteps(spec, "none", 1, false);
        const std::int64_t budget = *baseline.peakAllocatedBytes * 3 / 2;
        QCOMPARE(tracedBatch(*baseline.trace), std::optional<std::int64_t>(spec.batch));
        const BatchFit fit = largestBatch(*baseline.trace, {}, budget, spec.batch);
        QVERIFY(fit.fits);
        QVERIFY2(*fit.batch > spec.batch, "half as much memory again holds no larger batch");
        nlohmann::json object = spec.toJson();
        object["batch"] = *fit.batch;
        const ModelSpec larger = parseModelSpec(object, "test", ".");
        const RunResult limited = test::replaySteps(larger, strategyOf(fit.model, fit.plan).toString(), 1, false, budget);
        QVERIFY2(!limited.oom,
                 qPrintable(QStringLiteral("batch %1: ").arg(*fit.batch) + qs(limited.oom ? limited.oom->message : "")));
        const double error =
            double(fit.plan.prediction.peakBytes - *limited.peakAllocatedBytes) / double(*limited.peakAllocatedBytes);
        QVERIFY2(std::abs(error) < 0.03, qPrintable(QStringLiteral("batch %1: predicted %2, measured %3")
                                                        .arg(*fit.batch)
                                                        .arg(fit.plan.prediction.peakBytes)
                                                        .arg(*limited.peakAllocatedBytes)));
        // Two samples more do not fit, with the checkpoints that lower their peak most. (On
        // GPT one more does: the position embeddings do not grow with the batch, and the
        // scaled step counts them as if they did.)
        object["batch"] = *fit.batch + 2;
        const ModelSpec next = parseModelSpec(object, "test", ".");
        const RunResult nextPlain = test::replaySteps(next, "none", 1, false);
        const CostModel nextModel = buildCostModel(*nextPlain.trace);
        const RunResult nextLimited =
            test::replaySteps(next, strategyOf(nextModel, lowestPeakPlan(nextModel)).toString(), 1, false, budget);
        QVERIFY2(nextLimited.oom,
                 qPrintable(QStringLiteral("batch %1 fits too: %2").arg(*fit.batch + 2).arg(*nextLimited.peakAllocatedBytes)));
    }
};

QTEST_GUILESS_MAIN(tst_BudgetGuarantee)
#include "tst_budgetguarantee.moc"
