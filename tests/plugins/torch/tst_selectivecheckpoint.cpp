// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/plan/planner.h"
#include "plugins/torch/replayrunner.h"
#include "smallmodels.h"

#include <functional>

using namespace peaklens;
using namespace peaklens::replay;
using test::qs;

namespace {

// Per chain layer, every way the planner may run it: plainly, whole, or with any set of
// the parts it weighs (direct children that free something; the small models have at most
// five), as schedules of that layer alone.
std::vector<CheckpointSchedule> layerChoices(const CostModel &model, std::size_t k)
{
    const ChainLayer &layer = model.layers[k];
    std::vector<CheckpointSchedule> choices{{}, {{k, k, {}}}};
    std::vector<std::size_t> children;
    for (std::size_t c = 0; c < layer.parts.size(); ++c) {
        if (layer.parts[c].savingBytes > 0 && layer.parts[c].path.find('.', layer.path.size() + 1) == std::string::npos)
            children.push_back(c);
    }
    for (std::uint32_t subset = 1; subset < (1u << children.size()); ++subset) {
        CheckpointSchedule choice;
        for (std::size_t i = 0; i < children.size(); ++i) {
            if (subset >> i & 1u)
                choice.push_back({k, k, {}, children[i]});
        }
        choices.push_back(choice);
    }
    return choices;
}

// Calls `visit` with every combination of the layers' choices.
void everySchedule(const CostModel &model, const std::function<void(const CheckpointSchedule &)> &visit)
{
    std::vector<std::vector<CheckpointSchedule>> choices;
    for (std::size_t k = 0; k < model.layers.size(); ++k)
        choices.push_back(layerChoices(model, k));
    CheckpointSchedule schedule;
    const std::function<void(std::size_t)> walk = [&](std::size_t k) {
        if (k == choices.size()) {
            visit(schedule);
            return;
        }
        for (const CheckpointSchedule &choice : choices[k]) {
            schedule.insert(schedule.end(), choice.begin(), choice.end());
            walk(k + 1);
            schedule.resize(schedule.size() - choice.size());
        }
    };
    walk(0);
}

// The same chain without its parts: what a planner of whole layers sees.
CostModel withoutParts(CostModel model)
{
    for (ChainLayer &layer : model.layers) {
        layer.parts.clear();
        layer.backwardPieces.clear();
    }
    return model;
}

} // namespace

// Checkpointing a module inside a layer (a GPT block's attn or mlp): predicted as the
// replay measures it, planned as well as any choice of parts and layers, and worth it:
// at some budgets the plan recomputes parts for less added time than any plan of whole
// layers.
class tst_SelectiveCheckpoint : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void predictionsMatchReplays_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("microBatches");
        QTest::addColumn<bool>("bf16");
        QTest::addColumn<QString>("strategy");
        QTest::newRow("gpt, one attn") << QStringLiteral("gpt") << 1 << false << QStringLiteral("blocks.1.attn");
        QTest::newRow("gpt, attn and mlp") << QStringLiteral("gpt") << 1 << false
                                           << QStringLiteral("blocks.0.attn,blocks.1.mlp,blocks.2.attn,blocks.3.mlp");
        QTest::newRow("gpt, parts beside a layer, bf16, 2 micro-batches")
            << QStringLiteral("gpt") << 2 << true << QStringLiteral("blocks.0,blocks.2.attn,blocks.3.ln1,blocks.3.mlp");
        QTest::newRow("mlp, the last part (the block's output)")
            << QStringLiteral("mlp") << 1 << false << QStringLiteral("layers.1,layers.3.dropout");
        QTest::newRow("mlp, an input the step frees") << QStringLiteral("mlp") << 2 << false << QStringLiteral("layers.2.act");
        QTest::newRow("cnn, normalizations and convolutions")
            << QStringLiteral("cnn") << 1 << false << QStringLiteral("blocks.0.bn1,blocks.1.bn2,blocks.2.dropout,blocks.3.conv1");
    }
    void predictionsMatchReplays()
    {
        QFETCH(QString, model);
        QFETCH(int, microBatches);
        QFETCH(bool, bf16);
        QFETCH(QString, strategy);
        const ModelSpec spec = test::smallModel(model, 4);
        const RunResult baseline = test::replaySteps(spec, "none", microBatches, bf16);
        const CostModel costs = buildCostModel(*baseline.trace);
        const Plan plan = planForStrategy(costs, strategy.toStdString());
        QCOMPARE(qs(strategyOf(costs, plan).toString()), strategy.split(QLatin1Char(',')).join(QLatin1Char(',')));
        const RunResult rerun = test::replaySteps(spec, strategy.toStdString(), microBatches, bf16);
        QVERIFY(!rerun.oom);
        const double error = double(plan.prediction.peakBytes - *rerun.peakAllocatedBytes) / double(*rerun.peakAllocatedBytes);
        QVERIFY2(std::abs(error) < 0.03,
                 qPrintable(
                     QStringLiteral("predicted %1, measured %2").arg(plan.prediction.peakBytes).arg(*rerun.peakAllocatedBytes)));
        // The last part ran in its own ranges, a forward and a backward per pass and step.
        const auto part = rerun.trace->findLayer(strategy.split(QLatin1Char(',')).last().toStdString());
        QVERIFY(part);
        int forwards = 0, backwards = 0;
        for (const Range &range : rerun.trace->ranges) {
            forwards += range.layer == *part && range.phase == Phase::Forward;
            backwards += range.layer == *part && range.phase == Phase::Backward;
        }
        QCOMPARE(forwards, 2 * microBatches);
        QCOMPARE(backwards, 2 * microBatches);
    }

    void plannerMatchesEveryChoiceOfPartsAndLayers()
    {
        const RunResult baseline = test::replaySteps(test::smallModel(QStringLiteral("gpt"), 4), "none");
        const CostModel costs = buildCostModel(*baseline.trace);
        QVERIFY(costs.layers.front().parts.size() >= 4);
        std::vector<std::pair<std::int64_t, std::int64_t>> all; // (peak, added) of every schedule
        everySchedule(costs, [&](const CheckpointSchedule &schedule) {
            const Prediction prediction = predict(costs, schedule);
            all.emplace_back(prediction.peakBytes, prediction.addedTimeNs);
        });
        QVERIFY(all.size() > 10000);
        const std::int64_t measured = predict(costs, CheckpointSchedule{}).peakBytes;
        const std::int64_t lowest = lowestPeakPlan(costs).prediction.peakBytes;
        for (int i = 0; i < 8; ++i) {
            const std::int64_t budget = lowest + (measured - lowest) * i / 7;
            const Plan plan = planForBudget(costs, budget);
            const std::int64_t limit = budget - plan.marginBytes;
            std::optional<std::int64_t> best;
            for (const auto &[peak, added] : all) {
                if (peak <= limit)
                    best = std::min(best.value_or(added), added);
            }
            if (!best)
                continue;
            QVERIFY(plan.feasible);
            QVERIFY(plan.prediction.peakBytes <= limit);
            QVERIFY2(plan.prediction.addedTimeNs <= *best,
                     qPrintable(QStringLiteral("budget %1: planner adds %2 ns, the best choice %3 ns")
                                    .arg(budget)
                                    .arg(plan.prediction.addedTimeNs)
                                    .arg(*best)));
        }
    }

    void partsBeatWholeLayersAtSomeBudgets()
    {
        const RunResult baseline = test::replaySteps(test::smallModel(QStringLiteral("gpt"), 4), "none");
        const CostModel costs = buildCostModel(*baseline.trace);
        const CostModel whole = withoutParts(costs);
        const std::int64_t measured = predict(costs, CheckpointSchedule{}).peakBytes;
        const std::int64_t lowest = lowestPeakPlan(whole).prediction.peakBytes;
        int cheaper = 0;
        for (int i = 0; i < 8; ++i) {
            const std::int64_t budget = lowest + (measured - lowest) * i / 7;
            const Plan selective = planForBudget(costs, budget), layers = planForBudget(whole, budget);
            if (!layers.feasible) // the lowest peak, less the margin
                continue;
            QVERIFY(selective.feasible);
            QVERIFY(selective.prediction.addedTimeNs <= layers.prediction.addedTimeNs);
            if (selective.prediction.addedTimeNs < layers.prediction.addedTimeNs) {
                ++cheaper;
                QVERIFY(std::any_of(selective.schedule.begin(), selective.schedule.end(),
                                    [](const CheckpointUnit &unit) { return unit.isPart(); }));
            }
        }
        QVERIFY2(cheaper > 0, "no budget where recomputing parts is cheaper than whole layers");
    }
};

QTEST_GUILESS_MAIN(tst_SelectiveCheckpoint)
#include "tst_selectivecheckpoint.moc"
