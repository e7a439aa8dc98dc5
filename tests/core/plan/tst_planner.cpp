// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/error.h"
#include "core/format/tracereader.h"
#include "core/plan/headroom.h"
#include "core/plan/planner.h"

#include <random>

using namespace peaklens;

namespace {

// A random chain: segment peaks, per-layer savings, recompute and backward peaks and times, built
// directly so that thousands of chains cost nothing.
CostModel randomChain(std::mt19937_64 &random, std::size_t n)
{
    std::uniform_int_distribution<std::int64_t> bytes(1, 1000);
    std::uniform_int_distribution<std::int64_t> time(1, 100);
    CostModel model;
    model.stepTimeNs = 1000;
    for (std::size_t i = 0; i <= n; ++i) {
        model.curve.push_back({static_cast<std::int64_t>(2 * i), 0, static_cast<std::uint32_t>(i), false, Phase::Forward});
        model.curve.push_back({static_cast<std::int64_t>(2 * i + 1), 0, static_cast<std::uint32_t>(i), true, Phase::Backward});
        model.forwardPeakBytes.push_back(i == 0 ? bytes(random) : 2000 + bytes(random) * 3);
        model.forwardPeakPoint.push_back(2 * i);
        model.gapPeakBytes.push_back(random() % 3 == 0 ? INT64_MIN : 1500 + bytes(random) * 3);
        model.gapPeakPoint.push_back(2 * i + 1);
    }
    for (std::size_t i = 0; i < n; ++i) {
        ChainLayer layer;
        layer.path = "blocks." + std::to_string(i);
        layer.savingBytes = random() % 5 == 0 ? 0 : bytes(random); // some free nothing
        layer.keptBytes = layer.savingBytes + bytes(random) / 3;   // and their output
        layer.retainedBytes = layer.keptBytes + bytes(random) / 10;
        layer.forwardRiseBytes = layer.retainedBytes + bytes(random);
        layer.levelBeforeRecomputeBytes = 1000 + bytes(random) * 3;
        layer.recomputePeakBytes = layer.levelBeforeRecomputeBytes + layer.forwardRiseBytes - bytes(random) / 10;
        layer.backwardLevelPeakBytes = 1500 + bytes(random) * 3;
        layer.heldInBackwardBytes = bytes(random) / 4;
        layer.backwardPeakBytes = layer.backwardLevelPeakBytes + layer.heldInBackwardBytes;
        layer.recomputeNs = time(random);
        model.layers.push_back(layer);
    }
    return model;
}

struct Outcome
{
    std::int64_t peak;
    std::int64_t added;
};

// Every schedule over layers first..last: each layer plain or starting a unit, each unit
// with every schedule of inner units that end before it does.
std::vector<std::vector<CheckpointUnit>> everySchedule(std::size_t first, std::size_t last)
{
    if (first > last)
        return {{}};
    std::vector<std::vector<CheckpointUnit>> all;
    for (auto rest : everySchedule(first + 1, last))
        all.push_back(std::move(rest));
    for (std::size_t end = first; end <= last; ++end) {
        const auto inners = end > first ? everySchedule(first, end - 1) : std::vector<std::vector<CheckpointUnit>>{{}};
        for (const auto &inner : inners) {
            for (auto rest : everySchedule(end + 1, last)) {
                rest.insert(rest.begin(), CheckpointUnit{first, end, inner});
                all.push_back(std::move(rest));
            }
        }
    }
    return all;
}

std::vector<Outcome> everyOutcome(const CostModel &model)
{
    std::vector<Outcome> outcomes;
    for (const CheckpointSchedule &schedule : everySchedule(0, model.layers.size() - 1)) {
        const Prediction prediction = predict(model, schedule);
        outcomes.push_back({prediction.peakBytes, prediction.addedTimeNs});
    }
    return outcomes;
}

} // namespace

class tst_Planner : public QObject
{
    Q_OBJECT

private slots:
    // The planner's answer equals the best of all schedules (single layers, segments and
    // nested segments) within the budget less its margin, on 400 random chains, with the
    // options the command line uses.
    void equalsBruteForce()
    {
        QCOMPARE(everySchedule(0, 2).size(), std::size_t(22)); // 6 + 6 + 2·2 + 6
        std::mt19937_64 random(20261121);
        int feasibleBudgets = 0, infeasibleBudgets = 0;
        const PlannerOptions defaults; // the command line's: the slots are refined until the best is settled
        for (int chain = 0; chain < 400; ++chain) {
            const std::size_t n = 1 + random() % 5;
            const CostModel model = randomChain(random, n);
            const std::vector<Outcome> outcomes = everyOutcome(model);
            std::int64_t lowest = INT64_MAX, measured = outcomes.front().peak;
            for (const Outcome &o : outcomes)
                lowest = std::min(lowest, o.peak);
            std::uniform_int_distribution<std::int64_t> budgets(lowest - 300, measured + 100);
            for (int b = 0; b < 3; ++b) {
                const std::int64_t budget = b == 0 ? lowest + lowest / 100 : budgets(random);
                // The plan stays its margin below the budget.
                const std::int64_t target = budget - budgetMargin(model, budget);
                std::int64_t best = INT64_MAX;
                for (const Outcome &o : outcomes) {
                    if (o.peak <= target)
                        best = std::min(best, o.added);
                }
                const Plan plan = planForBudget(model, budget, defaults);
                QCOMPARE(plan.marginBytes, budget - target);
                // The list of toggles it prints, passed back, is the same plan.
                QCOMPARE(planForToggles(model, toggles(model, plan)).schedule, plan.schedule);
                if (best == INT64_MAX) {
                    ++infeasibleBudgets;
                    QVERIFY(!plan.feasible);
                    QCOMPARE(plan.prediction.peakBytes, lowest);
                    continue;
                }
                ++feasibleBudgets;
                QVERIFY(plan.feasible);
                QVERIFY2(plan.prediction.peakBytes <= target, "a plan above its budget");
                if (plan.prediction.addedTimeNs != best)
                    QFAIL(qPrintable(QStringLiteral("chain %1 (N=%2), budget %3: planner adds %4, the best subset %5")
                                         .arg(chain)
                                         .arg(n)
                                         .arg(budget)
                                         .arg(plan.prediction.addedTimeNs)
                                         .arg(best)));
            }
        }
        QVERIFY(feasibleBudgets > 400);
        QVERIFY(infeasibleBudgets > 40);
    }

    // Thinned to a handful of states, plans may cost more, but never break the budget.
    void thinnedPlansStayWithinBudget()
    {
        std::mt19937_64 random(7);
        PlannerOptions options;
        options.maxStates = 4;
        for (int chain = 0; chain < 200; ++chain) {
            const CostModel model = randomChain(random, 1 + random() % 16);
            const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes;
            const Plan plan = planForBudget(model, measured - 200, options);
            if (plan.feasible)
                QVERIFY(plan.prediction.peakBytes <= measured - 200);
        }
    }

    // A budget plan names the next cheapest plan that fits; when it is closer than the
    // steps' spread, the ranking is noise.
    void runnerUpAgainstTheSpread()
    {
        std::mt19937_64 random(11);
        CostModel model = randomChain(random, 12);
        const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes;
        const std::int64_t lowest = lowestPeakPlan(model).prediction.peakBytes;
        const Plan plan = planForBudget(model, lowest + (measured - lowest) * 9 / 10);
        QVERIFY(plan.feasible);
        QVERIFY(plan.runnerUpAddedNs);
        QVERIFY(*plan.runnerUpAddedNs > plan.prediction.addedTimeNs);
        model.stepTimeSpreadNs = 0;
        QVERIFY(!plan.rankedWithinNoise(model));
        model.stepTimeSpreadNs = *plan.runnerUpAddedNs - plan.prediction.addedTimeNs + 1;
        QVERIFY(plan.rankedWithinNoise(model));
    }

    void overheadAndStrategies()
    {
        std::mt19937_64 random(3);
        const CostModel model = randomChain(random, 12);
        const Plan free = planForOverhead(model, 0.0);
        QCOMPARE(free.prediction.addedTimeNs, qint64(0));
        const Plan generous = planForOverhead(model, 10.0);
        QCOMPARE(generous.prediction.peakBytes, lowestPeakPlan(model).prediction.peakBytes);
        const Plan tenPercent = planForOverhead(model, 0.1);
        QVERIFY(tenPercent.prediction.addedTimeNs <= 100);

        QCOMPARE(planForStrategy(model, "none").prediction.addedTimeNs, qint64(0));
        const Plan every3 = planForStrategy(model, "every:3");
        QCOMPARE(every3.checkpoint,
                 (std::vector<bool>{true, false, false, true, false, false, true, false, false, true, false, false}));
        QCOMPARE(planForStrategy(model, "sqrt").checkpoint, planForStrategy(model, "segments:4").checkpoint);
        QCOMPARE(planForStrategy(model, "all").checkpoint, std::vector<bool>(12, true));
        QVERIFY_THROWS_EXCEPTION(Error, planForStrategy(model, "every:0"));
        QVERIFY_THROWS_EXCEPTION(Error, planForStrategy(model, "most"));

        const std::vector<Plan> sweep = paretoSweep(model);
        QVERIFY(sweep.size() >= 2);
        for (std::size_t i = 1; i < sweep.size(); ++i) {
            QVERIFY(sweep[i].prediction.peakBytes > sweep[i - 1].prediction.peakBytes);
            QVERIFY(sweep[i].prediction.addedTimeNs < sweep[i - 1].prediction.addedTimeNs);
        }
    }

    // The advice a warning near the device's memory carries, on the bundled replay's
    // model (273.8 MiB measured): toggles that fit the capacity less 5 %, none where the
    // step fits as it is, and the lowest reachable peak where nothing fits.
    void headroomAdviceSaysWhatFits_data()
    {
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<QString>("opening");
        QTest::addColumn<bool>("feasible");
        QTest::newRow("280 MiB: checkpoint to keep 5 %") << qint64(280) << QStringLiteral("checkpointing ") << true;
        QTest::newRow("1 GiB: fits as it is")
            << qint64(1024) << QStringLiteral("the model of the steps recorded so far stays under") << true;
        QTest::newRow("100 MiB: nothing fits")
            << qint64(100) << QStringLiteral("no checkpoint set keeps it under 95.00 MiB") << false;
    }
    void headroomAdviceSaysWhatFits()
    {
        QFETCH(qint64, capacity);
        QFETCH(QString, opening);
        QFETCH(bool, feasible);
        const CostModel model =
            buildCostModel(*TraceReader::read(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens"));
        const HeadroomAdvice advice = adviseHeadroom(model, capacity << 20, 0.05);
        QCOMPARE(advice.budgetBytes, std::int64_t(double(capacity << 20) * 0.95));
        const QString sentence = QString::fromStdString(advice.sentence(model));
        QVERIFY2(sentence.startsWith(opening), qPrintable(sentence));
        QCOMPARE(advice.plan.feasible, feasible);
        QCOMPARE(advice.plan.prediction.peakBytes <= advice.budgetBytes, feasible);
        // The strategy names the plan's own toggles, for a rerun.
        QCOMPARE(planForStrategy(model, advice.strategy).schedule, advice.plan.schedule);
    }
};

QTEST_GUILESS_MAIN(tst_Planner)
#include "tst_planner.moc"
