// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "rotorreference.h"

#include "core/plan/planner.h"
#include "plugins/torch/replayrunner.h"
#include "smallmodels.h"

using namespace peaklens;
using namespace peaklens::replay;
using test::qs;

namespace {

ModelSpec specFor(const QString &model)
{
    return test::smallModel(model, model == QStringLiteral("gpt") ? 8 : model == QStringLiteral("mlp") ? 12 : 6);
}

// The measured chain as Rotor sees a chain: per stage its times, its output, all it keeps
// for backward, and the transients of its forward and backward.
std::vector<test::RotorStage> rotorChain(const CostModel &model)
{
    std::vector<test::RotorStage> stages;
    for (const ChainLayer &layer : model.layers) {
        stages.push_back({layer.recomputeNs, layer.backwardNs, layer.outputBytes, layer.keptBytes,
                          std::max<std::int64_t>(0, layer.forwardRiseBytes - layer.retainedBytes),
                          std::max<std::int64_t>(0, layer.backwardLevelPeakBytes - layer.levelAtBackwardBytes)});
    }
    return stages;
}

QString mib(std::int64_t bytes)
{
    return QString::number(double(bytes) / double(1 << 20), 'f', 2);
}

QString ms(std::int64_t ns)
{
    return QString::number(double(ns) / 1e6, 'f', 1);
}

} // namespace

// At budgets from the lowest reachable peak to the measured one, on a measured chain of
// each built-in model, the planner's schedule adds no more time than Rotor's optimum on
// the same chain wherever Rotor's schedule fits, and reaches at least as low a floor.
// Both are replayed under the budget as a memory limit: the planner's never runs out.
class tst_RotorComparison : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void noWorseThanRotor_data()
    {
        QTest::addColumn<QString>("model");
        for (const char *model : {"gpt", "mlp", "cnn"})
            QTest::addRow("%s", model) << QString::fromLatin1(model);
    }
    void noWorseThanRotor()
    {
        QFETCH(QString, model);
        const ModelSpec spec = specFor(model);
        const RunResult baseline = test::replaySteps(spec, "none");
        const CostModel costs = buildCostModel(*baseline.trace);
        const std::int64_t measured = predict(costs, CheckpointSchedule{}).peakBytes;
        std::int64_t activations = 0;
        for (const ChainLayer &layer : costs.layers)
            activations += layer.keptBytes;
        const std::int64_t rest = measured - activations; // what Rotor does not count
        const auto stages = rotorChain(costs);
        const PlannerOptions defaults; // what `peaklens-cli plan --budget` uses
        const std::int64_t lowest = lowestPeakPlan(costs, defaults).prediction.peakBytes;

        std::int64_t rotorFloor = INT64_MAX;
        int rotorOutOfMemory = 0, compared = 0;
        constexpr int kBudgets = 8;
        for (int i = 0; i < kBudgets; ++i) {
            const std::int64_t budget = lowest + (measured - lowest) * i / (kBudgets - 1);
            const Plan plan = planForBudget(costs, budget, defaults);
            QVERIFY(plan.feasible);
            QVERIFY(plan.prediction.peakBytes <= budget);
            const RunResult limited = test::replaySteps(spec, strategyOf(costs, plan).toString(), 1, false, budget);
            QVERIFY2(!limited.oom, qPrintable(QStringLiteral("the plan for %1 B ran out of memory").arg(budget)));

            QString rotorText = QStringLiteral("nothing fits");
            if (const auto rotor = test::rotorOptimum(stages, budget - rest)) {
                const Prediction predicted = predict(costs, rotor->schedule);
                rotorFloor = std::min(rotorFloor, predicted.peakBytes);
                const std::string written = CheckpointStrategy::of(rotor->schedule, chainPaths(costs)).toString();
                const RunResult rotorRun = test::replaySteps(spec, written, 1, false, budget);
                rotorOutOfMemory += rotorRun.oom.has_value();
                rotorText = QStringLiteral("+%1 ms, %2 MiB predicted, %3 (%4)")
                                .arg(ms(predicted.addedTimeNs), mib(predicted.peakBytes),
                                     rotorRun.oom ? QStringLiteral("out of memory") : QStringLiteral("fits"), qs(written));
                if (predicted.peakBytes <= budget) {
                    ++compared;
                    QVERIFY2(plan.prediction.addedTimeNs <= predicted.addedTimeNs,
                             qPrintable(QStringLiteral("budget %1 B: the planner adds %2 ns, Rotor's schedule %3 ns")
                                            .arg(budget)
                                            .arg(plan.prediction.addedTimeNs)
                                            .arg(predicted.addedTimeNs)));
                }
            }
            qInfo("%s budget %s MiB: planner +%s ms, %s MiB (%s); Rotor %s", qPrintable(model), qPrintable(mib(budget)),
                  qPrintable(ms(plan.prediction.addedTimeNs)), qPrintable(mib(plan.prediction.peakBytes)),
                  qPrintable(qs(strategyOf(costs, plan).toString())), qPrintable(rotorText));
        }
        qInfo("%s floor: planner %s MiB, Rotor %s MiB; Rotor's schedules out of memory under their budget: %d", qPrintable(model),
              qPrintable(mib(lowest)), qPrintable(rotorFloor == INT64_MAX ? QStringLiteral("-") : mib(rotorFloor)),
              rotorOutOfMemory);
        QVERIFY(lowest <= rotorFloor);
        QVERIFY(compared > 0);
    }
};

QTEST_GUILESS_MAIN(tst_RotorComparison)
#include "tst_rotorcomparison.moc"
