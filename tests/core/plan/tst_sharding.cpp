// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/peakfinder.h"
#include "core/error.h"
#include "core/format/tracereader.h"
#include "core/plan/planner.h"
#include "core/plan/sharding.h"
#include "core/trace/metadata.h"

#include <array>
#include <map>

using namespace peaklens;

namespace {

// examples/train_small.py on the CPU: one process, and the two ranks of the same model
// sharded with FSDP2 over gloo (tests/data/fsdp/make_fsdp_traces.sh).
std::shared_ptr<const Trace> fsdpTrace(const char *name)
{
    return TraceReader::read(std::string(PEAKLENS_SOURCE_DIR "/tests/data/fsdp/") + name + ".peaklens");
}

std::int64_t peakOf(const Trace &trace)
{
    const PeakReport peaks = findPeaks(trace);
    return peaks.devices[*peaks.primary].allocatedBytes;
}

using CategoryBytes = std::array<std::int64_t, kCategoryCount>;

// The live bytes per category just before `timeNs`, and what each category's blocks would
// be divided into `degree` shards.
struct LiveAt
{
    CategoryBytes bytes{}, shards{};
};

LiveAt liveBefore(const Trace &trace, std::int64_t timeNs, int degree)
{
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::pair<std::int64_t, Category>> live;
    for (std::size_t i = 0; i < trace.events.size() && trace.events.timeNs(i) < timeNs; ++i) {
        const MemoryEvent event = trace.events.at(i);
        if (event.deltaBytes > 0)
            live[{event.lane, event.addr}] = {event.deltaBytes, event.category};
        else
            live.erase({event.lane, event.addr});
    }
    LiveAt result;
    for (const auto &[key, block] : live) {
        result.bytes[static_cast<std::size_t>(block.second)] += block.first;
        result.shards[static_cast<std::size_t>(block.second)] += (block.first + degree - 1) / degree;
    }
    return result;
}

// The begin of the last step's optimizer range: its gradients are all made and reduced.
std::int64_t lastOptimizerBegins(const Trace &trace)
{
    std::int64_t begin = -1;
    for (const Range &range : trace.ranges) {
        if (range.phase == Phase::Optimizer && range.layer == kNoLayer)
            begin = std::max(begin, range.beginNs);
    }
    return begin;
}

std::size_t index(Category category)
{
    return static_cast<std::size_t>(category);
}

} // namespace

class tst_Sharding : public QObject
{
    Q_OBJECT

private slots:
    // The unsharded run's trace, rewritten as one rank of two holds it, peaks where each
    // rank of the real FSDP2 run peaked, within 3 %.
    void predictsEachRanksPeak_data()
    {
        QTest::addColumn<QString>("rank");
        QTest::newRow("rank 0") << QStringLiteral("rank0");
        QTest::newRow("rank 1") << QStringLiteral("rank1");
    }
    void predictsEachRanksPeak()
    {
        QFETCH(QString, rank);
        const auto unsharded = fsdpTrace("unsharded");
        QVERIFY(gathersWithCopy(buildCostModel(*unsharded).device)); // a CPU run: gloo
        const Trace predicted = withSharding(*unsharded, {}, Sharding{2, 3, true});
        const std::int64_t measured = peakOf(*fsdpTrace(test::ss(rank).c_str()));
        const std::int64_t peak = peakOf(predicted);
        QVERIFY2(std::abs(static_cast<double>(peak - measured)) <= 0.03 * static_cast<double>(measured),
                 qPrintable(QStringLiteral("predicted %1, measured %2").arg(peak).arg(measured)));
        QVERIFY(peak < peakOf(*unsharded));
        // The planner plans on that rank: its baseline is the rank's peak.
        const CostModel model = buildCostModel(predicted);
        QCOMPARE(predict(model, CheckpointSchedule{}).peakBytes, peak);
    }

    // Each stage divides its categories and no other: optimizer state from stage 1,
    // gradients (once reduce-scattered) from stage 2, parameters at stage 3, each block
    // into its shard of ceil(bytes / degree).
    void eachStageDividesItsCategories_data()
    {
        QTest::addColumn<int>("stage");
        QTest::addColumn<int>("degree");
        QTest::newRow("ZeRO-1, 2 ranks") << 1 << 2;
        QTest::newRow("ZeRO-2, 2 ranks") << 2 << 2;
        QTest::newRow("FSDP, 2 ranks") << 3 << 2;
        QTest::newRow("FSDP, 8 ranks") << 3 << 8;
    }
    void eachStageDividesItsCategories()
    {
        QFETCH(int, stage);
        QFETCH(int, degree);
        const auto unsharded = fsdpTrace("unsharded");
        const Trace rank = withSharding(*unsharded, {}, Sharding{degree, stage, true});
        const std::int64_t at = lastOptimizerBegins(*unsharded);
        QVERIFY(at > 0);
        const LiveAt before = liveBefore(*unsharded, at, degree), after = liveBefore(rank, at, degree);
        QVERIFY(before.bytes[index(Category::Gradient)] > 0);
        QCOMPARE(after.bytes[index(Category::OptimizerState)], before.shards[index(Category::OptimizerState)]);
        QCOMPARE(after.bytes[index(Category::Gradient)],
                 stage >= 2 ? before.shards[index(Category::Gradient)] : before.bytes[index(Category::Gradient)]);
        QCOMPARE(after.bytes[index(Category::Parameter)],
                 stage >= 3 ? before.shards[index(Category::Parameter)] : before.bytes[index(Category::Parameter)]);
        QCOMPARE(after.bytes[index(Category::Activation)], before.bytes[index(Category::Activation)]);
    }

    // What the rewrite adds is freed again: every gathered unit, every reduce-scatter's
    // input; the level never goes below zero and ends where the shards leave it.
    void addedBlocksAreAllFreed()
    {
        const auto unsharded = fsdpTrace("unsharded");
        const Trace rank = withSharding(*unsharded, {}, Sharding{2, 3, true});
        std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> live;
        std::int64_t level = 0, lowest = 0, added = 0;
        for (std::size_t i = 0; i < rank.events.size(); ++i) {
            const MemoryEvent event = rank.events.at(i);
            if (i > 0)
                QVERIFY(event.timeNs >= rank.events.timeNs(i - 1));
            if (event.deltaBytes > 0) {
                QVERIFY(live.emplace(std::pair(event.lane, event.addr), event.deltaBytes).second);
                added += event.addr >= (std::uint64_t(1) << 62);
            } else if (auto found = live.find({event.lane, event.addr}); found != live.end()) {
                QCOMPARE(-event.deltaBytes, found->second);
                live.erase(found);
            }
            level += event.deltaBytes;
            lowest = std::min(lowest, level);
        }
        QCOMPARE(lowest, std::int64_t(0));
        QVERIFY(added > 0);
        for (const auto &[key, bytes] : live)
            QVERIFY2(key.second < (std::uint64_t(1) << 62), "a gathered unit or a reduce-scatter input is never freed");
    }

    // The rank's trace says what it is, and is not sharded again.
    void aRankSaysWhatItIsAndIsNotShardedAgain()
    {
        const Trace rank = withSharding(*fsdpTrace("unsharded"), {}, Sharding{4, 2, false});
        QCOMPARE(test::qs(rank.metaValue(metakey::Sharding)),
                 QStringLiteral("one rank of 4 sharding the traced run (ZeRO stage 2: gradients and optimizer state divided)"));
        QVERIFY_THROWS_EXCEPTION(Error, withSharding(rank, {}, Sharding{2, 3, true}));
    }

    // A gathered unit is its layer's parameters: without them in the trace, stage 3 says
    // so, and the stages that gather nothing still plan.
    void stageThreeNeedsEachUnitsParameterBytes()
    {
        const auto trace = test::traceFrom(QStringLiteral("layer blocks.0 kind=Block\nlayer blocks.1 kind=Block\n"
                                                          "t=0 begin step 1\nt=1 begin fwd:blocks.0\nt=2 alloc a 100\n"
                                                          "t=3 end fwd:blocks.0\nt=3 begin fwd:blocks.1\nt=4 alloc b 100\n"
                                                          "t=5 end fwd:blocks.1\nt=5 begin bwd:blocks.1\nt=6 free b\n"
                                                          "t=7 end bwd:blocks.1\nt=7 begin bwd:blocks.0\nt=8 free a\n"
                                                          "t=9 end bwd:blocks.0\nt=10 end step 1\n"));
        try {
            withSharding(*trace, {}, Sharding{2, 3, false});
            QFAIL("sharded parameters without their bytes");
        } catch (const Error &error) {
            QVERIFY2(QString::fromUtf8(error.what()).contains(QStringLiteral("how many parameter bytes blocks.0 holds")),
                     error.what());
        }
        QCOMPARE(peakOf(withSharding(*trace, {}, Sharding{2, 2, false})), std::int64_t(200));
    }
};

QTEST_GUILESS_MAIN(tst_Sharding)
#include "tst_sharding.moc"
