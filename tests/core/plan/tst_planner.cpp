#include "testsupport.h"

#include "core/error.h"
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
        model.curve.push_back({static_cast<std::int64_t>(i), 0, static_cast<std::uint32_t>(i), Phase::Forward});
        model.segmentPeakBytes.push_back(i == 0 ? bytes(random) : 2000 + bytes(random) * 3);
        model.segmentPeakPoint.push_back(i);
    }
    for (std::size_t i = 0; i < n; ++i) {
        ChainLayer layer;
        layer.path = "blocks." + std::to_string(i);
        layer.savingBytes = random() % 5 == 0 ? 0 : bytes(random); // some free nothing
        layer.recomputePeakBytes = 1500 + bytes(random) * 4;
        layer.backwardPeakBytes = 1500 + bytes(random) * 4;
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

std::vector<Outcome> everySubset(const CostModel &model)
{
    const std::size_t n = model.layers.size();
    std::vector<Outcome> outcomes;
    std::vector<bool> checkpoint(n);
    for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
        for (std::size_t i = 0; i < n; ++i)
            checkpoint[i] = mask >> i & 1u;
        const Prediction prediction = predict(model, checkpoint);
        outcomes.push_back({prediction.peakBytes, prediction.addedTimeNs});
    }
    return outcomes;
}

} // namespace

class tst_Planner : public QObject
{
    Q_OBJECT

private slots:
    // The planner's answer equals the best of all 2^N subsets within the budget less its
    // margin, on 1000 random chains.
    void equalsBruteForce()
    {
        std::mt19937_64 random(20261121);
        int feasibleBudgets = 0, infeasibleBudgets = 0;
        for (int chain = 0; chain < 1000; ++chain) {
            const std::size_t n = 1 + random() % 16;
            const CostModel model = randomChain(random, n);
            const std::vector<Outcome> outcomes = everySubset(model);
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
                const Plan plan = planForBudget(model, budget);
                QCOMPARE(plan.marginBytes, budget - target);
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
                                         .arg(chain).arg(n).arg(budget).arg(plan.prediction.addedTimeNs).arg(best)));
            }
        }
        QVERIFY(feasibleBudgets > 1000);
        QVERIFY(infeasibleBudgets > 100);
    }

    // Thinned to a handful of states, plans may cost more, but never break the budget.
    void thinnedPlansStayWithinBudget()
    {
        std::mt19937_64 random(7);
        PlannerOptions options;
        options.maxStates = 4;
        for (int chain = 0; chain < 200; ++chain) {
            const CostModel model = randomChain(random, 1 + random() % 16);
            const std::int64_t measured = predict(model, {}).peakBytes;
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
        const std::int64_t measured = predict(model, {}).peakBytes;
        const std::int64_t lowest = lowestPeakPlan(model).prediction.peakBytes;
        const Plan plan = planForBudget(model, lowest + (measured - lowest) / 2);
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
        QCOMPARE(every3.checkpoint, (std::vector<bool>{true, false, false, true, false, false, true, false, false, true, false, false}));
        QCOMPARE(planForStrategy(model, "sqrt").checkpoint, planForStrategy(model, "every:4").checkpoint);
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
};

QTEST_GUILESS_MAIN(tst_Planner)
#include "tst_planner.moc"
