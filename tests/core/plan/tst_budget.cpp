// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/error.h"
#include "core/plan/batchscaling.h"
#include "core/plan/budget.h"

using namespace peaklens;
using peaklens::test::traceFrom;

namespace {

// Parameters of 1000 bytes, one block saving 400 of activations, its gradient of 100.
const char *kStep = "t=0 alloc w 1000 parameter\n"
                    "begin step 1\n"
                    "begin fwd:blocks.0\nalloc a0 300 activation\nalloc o0 100 activation\nend fwd:blocks.0\n"
                    "begin fwd:blocks.1\nalloc a1 300 activation\nalloc o1 100 activation\nend fwd:blocks.1\n"
                    "begin bwd:blocks.1\nalloc g1 100 gradient\nfree a1\nfree o1\nend bwd:blocks.1\n"
                    "begin bwd:blocks.0\nalloc g0 100 gradient\nfree a0\nfree o0\nend bwd:blocks.0\n"
                    "end step 1\n";

} // namespace

class tst_Budget : public QObject
{
    Q_OBJECT

private slots:
    void parse_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("kind");
        QTest::addColumn<double>("value");
        QTest::newRow("bytes") << QStringLiteral("6GiB") << int(Budget::Kind::Bytes) << 6.0 * (1 << 30);
        QTest::newRow("share") << QStringLiteral("70%") << int(Budget::Kind::PeakShare) << 0.7;
        QTest::newRow("all of it") << QStringLiteral("100%") << int(Budget::Kind::PeakShare) << 1.0;
    }
    void parse()
    {
        QFETCH(QString, text);
        QFETCH(int, kind);
        QFETCH(double, value);
        const Budget budget = Budget::parse(text.toStdString());
        QCOMPARE(int(budget.kind), kind);
        QCOMPARE(budget.value, value);
    }

    void refuses_data()
    {
        QTest::addColumn<QString>("text");
        for (const char *text : {"", "%", "0%", "101%", "-5%", "x%", "lots", "0", "-1GiB"})
            QTest::newRow(text) << QString::fromLatin1(text);
    }
    void refuses()
    {
        QFETCH(QString, text);
        QVERIFY_THROWS_EXCEPTION(Error, Budget::parse(text.toStdString()));
    }

    void inBytes()
    {
        const CostModel model = buildCostModel(*traceFrom(QString::fromLatin1(kStep)));
        const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes; // 1000 + 800 + 100
        QCOMPARE(measured, std::int64_t(1900));
        QCOMPARE(Budget::parse("50%").bytes(model), std::int64_t(950));
        const std::int64_t lowest = lowestPeakPlan(model).prediction.peakBytes;
        QVERIFY(lowest < measured);
        QCOMPARE(Budget::activationShare(0).bytes(model), lowest);
        QCOMPARE(Budget::activationShare(1).bytes(model), measured);
        QCOMPARE(Budget::activationShare(0.5).bytes(model), lowest + (measured - lowest) / 2);
        QVERIFY_THROWS_EXCEPTION(Error, Budget::activationShare(1.5));
    }

    // Activations scale with the batch; parameters and gradients do not.
    void batchScaling()
    {
        const auto trace = traceFrom(QString::fromLatin1(kStep));
        const Trace doubled = withBatchScaled(*trace, 2.0);
        QCOMPARE(doubled.events.size(), trace->events.size());
        std::int64_t level = 0, highest = 0;
        for (std::size_t i = 0; i < doubled.events.size(); ++i) {
            const std::int64_t expected =
                trace->events.category(i) == Category::Activation ? 2 * trace->events.deltaBytes(i) : trace->events.deltaBytes(i);
            QCOMPARE(doubled.events.deltaBytes(i), expected);
            level += doubled.events.deltaBytes(i);
            highest = std::max(highest, level);
        }
        QCOMPARE(level, std::int64_t(1200)); // parameters and gradients stay
        QCOMPARE(highest, std::int64_t(1000 + 1600 + 100));

        // With 8 samples traced, 2700 bytes hold 16 without checkpoints; the largest that
        // fits 2200 needs checkpoints, and a larger budget holds more.
        const BatchFit fit = largestBatch(*trace, {}, 2200, 8);
        QVERIFY(fit.fits);
        QVERIFY(fit.batch && *fit.batch >= 8);
        QVERIFY(fit.plan.feasible);
        const BatchFit more = largestBatch(*trace, {}, 4000, 8);
        QVERIFY(*more.batch > *fit.batch);
        const BatchFit none = largestBatch(*trace, {}, 500, 8); // below the parameters
        QVERIFY(!none.fits);
        const BatchFit factor = largestBatch(*trace, {}, 2200, std::nullopt);
        QVERIFY(!factor.batch);
        QVERIFY(std::abs(factor.factor - double(*fit.batch) / 8.0) < 0.13); // hundredths against eighths
    }
};

QTEST_GUILESS_MAIN(tst_Budget)
#include "tst_budget.moc"
