// SPDX-License-Identifier: Apache-2.0
#include "core/record/recordingsession.h"

#include "core/analysis/allocationsites.h"
#include "core/error.h"
#include "core/format/tracereader.h"
#include "testsupport.h"

#include "core/plan/costmodel.h"
#include "core/plan/predictor.h"
#include <QFile>

#include <QTemporaryDir>

using namespace peaklens;
using namespace peaklens::record;

namespace {

constexpr std::uint32_t kMainThread = 101;
constexpr std::uint32_t kAutogradThread = 202;
constexpr std::int64_t kOrigin = 1'700'000'000'000'000'000;
constexpr std::int64_t kMiB = 1 << 20;

// The records CUPTI would deliver for one cudaMalloc or cudaFree made on `thread`.
struct Call
{
    std::uint32_t thread;
    bool allocation;
    std::uint64_t address;
    std::int64_t bytes;
    std::int64_t timeNs; // relative to kOrigin
};

MemoryRecord memoryOf(const Call &call, std::uint32_t correlation)
{
    return MemoryRecord{call.allocation, call.address, call.bytes, kOrigin + call.timeNs, 0, 7, correlation, false};
}

ApiRecord apiOf(const Call &call, std::uint32_t correlation)
{
    return ApiRecord{correlation, call.thread, kOrigin + call.timeNs - 5, kOrigin + call.timeNs + 5};
}

struct Recording
{
    QTemporaryDir dir;
    QString path = dir.filePath(QStringLiteral("rank0-pid1.peaklens"));
    TraceWriter writer{path.toStdString()};
    RecordingSession session;

    explicit Recording(bool segmentsOnly = false)
        : Recording(RecordingSession::Options{kOrigin, segmentsOnly, {}})
    {
    }
    explicit Recording(RecordingSession::Options options)
        : session(writer, std::move(options))
    {
    }

    void push(std::uint32_t thread, std::int64_t t, const char *name) { session.pushRange(thread, kOrigin + t, name); }
    void pop(std::uint32_t thread, std::int64_t t) { session.popRange(thread, kOrigin + t); }

    TracePtr finish()
    {
        session.finish();
        writer.finish();
        return TraceReader::read(path.toStdString());
    }
};

std::string layerOf(const Trace &trace, std::size_t event)
{
    const std::uint32_t layer = trace.events.layer(event);
    return layer == kNoLayer ? std::string("-") : trace.layers[layer].path;
}

// A metadata value, or "-" where the trace has no such key.
QString metaOrNone(const Trace &trace, std::string_view key)
{
    const auto it = trace.meta.find(key);
    return it == trace.meta.end() ? QStringLiteral("-") : test::qs(it->second);
}

std::size_t eventAt(const Trace &trace, std::int64_t timeNs)
{
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        if (trace.events.timeNs(i) == timeNs)
            return i;
    }
    return trace.events.size();
}

} // namespace

class tst_RecordingSession : public QObject
{
    Q_OBJECT

private slots:
    // One training step: the forward on the main thread, the backward on the autograd
    // thread while the main thread waits inside its step range. Each allocation belongs
    // to the innermost range of the thread that made it, whatever the other thread has
    // open at that moment; API records arrive one batch late for half the calls.
    void attributesAllocationsToTheirOwnThreadsInnermostRange()
    {
        Recording r;
        r.push(kMainThread, 0, "step:0");
        r.push(kMainThread, 100, "fwd:blocks");
        r.push(kMainThread, 110, "fwd:blocks.0");
        r.push(kMainThread, 120, "aten::mm"); // a library's own NVTX range: only nests
        r.pop(kMainThread, 150);
        r.pop(kMainThread, 200);
        r.push(kMainThread, 210, "fwd:blocks.1");
        r.pop(kMainThread, 300);
        r.pop(kMainThread, 310);
        r.push(kAutogradThread, 400, "bwd:blocks.1");
        r.pop(kAutogradThread, 500);
        r.push(kAutogradThread, 510, "bwd:blocks.0");
        r.pop(kAutogradThread, 600);
        r.push(kMainThread, 700, "opt");
        r.pop(kMainThread, 800);
        r.pop(kMainThread, 900);

        const std::vector<Call> calls = {
            {kMainThread, true, 0x1000, 4 * kMiB, 130}, // fwd blocks.0 (inside aten::mm), freed in bwd
            {kMainThread, true, 0x2000, 1 * kMiB, 140}, // fwd blocks.0, freed in fwd
            {kMainThread, false, 0x2000, 1 * kMiB, 190},     {kMainThread, true, 0x3000, 2 * kMiB, 250}, // fwd blocks.1
            {kAutogradThread, true, 0x4000, 3 * kMiB, 450}, // bwd blocks.1, a gradient
            {kMainThread, true, 0x5000, 1 * kMiB, 460},     // main thread between ranges
            {kAutogradThread, false, 0x3000, 2 * kMiB, 470}, {kAutogradThread, false, 0x1000, 4 * kMiB, 550},
            {kMainThread, true, 0x6000, 6 * kMiB, 750}, // optimizer state
        };
        std::uint32_t correlation = 1;
        std::vector<ApiRecord> late;
        for (const Call &call : calls) {
            r.session.add(memoryOf(call, correlation));
            if (correlation % 2)
                r.session.add(apiOf(call, correlation));
            else
                late.push_back(apiOf(call, correlation));
            ++correlation;
        }
        r.session.endBatch();
        for (const ApiRecord &api : late)
            r.session.add(api);
        r.session.endBatch();
        const auto trace = r.finish();

        QCOMPARE(trace->events.size(), calls.size());
        const struct
        {
            std::int64_t t;
            const char *layer;
            Phase phase;
            Category category;
        } expected[] = {
            {130, "blocks.0", Phase::Forward, Category::Activation},
            {140, "blocks.0", Phase::Forward, Category::Temporary},
            {190, "blocks.0", Phase::Forward, Category::Temporary}, // a free keeps its allocation's category
            {250, "blocks.1", Phase::Forward, Category::Activation},
            {450, "blocks.1", Phase::Backward, Category::Gradient},
            {460, "-", Phase::Other, Category::Unknown},
            {470, "blocks.1", Phase::Backward, Category::Activation},
            {550, "blocks.0", Phase::Backward, Category::Activation},
            {750, "-", Phase::Optimizer, Category::OptimizerState},
        };
        for (const auto &e : expected) {
            const std::size_t i = eventAt(*trace, e.t);
            QVERIFY2(i < trace->events.size(), qPrintable(QStringLiteral("no event at %1").arg(e.t)));
            QCOMPARE(layerOf(*trace, i), std::string(e.layer));
            QCOMPARE(trace->events.phase(i), e.phase);
            QCOMPARE(trace->events.category(i), e.category);
        }

        QCOMPARE(trace->steps.size(), std::size_t(1));
        QCOMPARE(trace->steps[0], (Step{0, 0, 900}));
        // fwd:blocks, fwd:blocks.0, fwd:blocks.1, two bwd ranges and opt; aten::mm is not a range.
        QCOMPARE(trace->ranges.size(), std::size_t(6));
        for (const Range &range : trace->ranges) {
            QCOMPARE(range.step, std::int64_t(0));
            QCOMPARE(range.thread, range.phase == Phase::Backward ? kAutogradThread : kMainThread);
        }
        QCOMPARE(trace->metaValue("source.format"), std::string("cupti"));
        QCOMPARE(trace->lanes.size(), std::size_t(1));
        QCOMPARE(trace->lanes[0].stream, std::uint64_t(7));
    }

    // Two steps of a four-block model recorded as the collector sees them: forward on the
    // main thread, backward on the autograd thread. The planner works on the result as on
    // a replayed trace: the blocks form the chain, each saving its activation.
    void aRecordedChainFeedsThePlanner()
    {
        Recording r;
        std::int64_t t = 0;
        std::uint32_t correlation = 0;
        auto call = [&](std::uint32_t thread, bool allocation, std::uint64_t address, std::int64_t bytes) {
            const Call c{thread, allocation, address, bytes, t += 10};
            r.session.add(memoryOf(c, ++correlation));
            r.session.add(apiOf(c, correlation));
        };
        for (int step = 0; step < 2; ++step) {
            r.push(kMainThread, t += 10, qPrintable(QStringLiteral("step:%1").arg(step)));
            r.push(kMainThread, t += 10, "fwd:blocks");
            for (int block = 0; block < 4; ++block) {
                r.push(kMainThread, t += 10, qPrintable(QStringLiteral("fwd:blocks.%1").arg(block)));
                call(kMainThread, true, 0x1000 + block, 4 * kMiB); // saved for the backward
                call(kMainThread, true, 0x2000 + block, 8 * kMiB); // a temporary
                call(kMainThread, false, 0x2000 + block, 8 * kMiB);
                call(kMainThread, true, 0x4000 + block, kMiB); // its output, the next block's input
                r.pop(kMainThread, t += 10);
            }
            r.pop(kMainThread, t += 10);
            for (int block = 3; block >= 0; --block) {
                r.push(kAutogradThread, t += 10, qPrintable(QStringLiteral("bwd:blocks.%1").arg(block)));
                call(kAutogradThread, true, 0x3000 + block, kMiB); // its gradient
                call(kAutogradThread, false, 0x1000 + block, 4 * kMiB);
                call(kAutogradThread, false, 0x4000 + block, kMiB);
                r.pop(kAutogradThread, t += 10);
            }
            r.push(kMainThread, t += 10, "opt");
            for (int block = 0; block < 4; ++block)
                call(kMainThread, false, 0x3000 + block, kMiB);
            r.pop(kMainThread, t += 10);
            r.pop(kMainThread, t += 10);
            r.session.endBatch();
        }
        const auto trace = r.finish();
        QCOMPARE(trace->steps.size(), std::size_t(2));
        const CostModel model = buildCostModel(*trace);
        QCOMPARE(model.layers.size(), std::size_t(4));
        for (std::size_t i = 0; i < model.layers.size(); ++i) {
            QCOMPARE(model.layers[i].path, "blocks." + std::to_string(i));
            QCOMPARE(model.layers[i].retainedBytes, 5 * kMiB);
            QCOMPARE(model.layers[i].outputBytes, kMiB);
            QCOMPARE(model.layers[i].savingBytes, 4 * kMiB);
        }
        QCOMPARE(model.measuredPeakBytes, 3 * 5 * kMiB + 4 * kMiB + 8 * kMiB); // three blocks saved, the fourth's forward
        const Prediction none = predict(model, CheckpointSchedule{});
        const Prediction all = predict(model, std::vector<bool>(4, true));
        QCOMPARE(none.peakBytes, model.measuredPeakBytes);
        QVERIFY(all.peakBytes < none.peakBytes);
    }

    void allocationWithoutItsApiRecordIsKeptWithoutALayer()
    {
        Recording r;
        r.push(kMainThread, 0, "fwd:encoder");
        r.session.add(MemoryRecord{true, 0x10, kMiB, kOrigin + 10, 0, 0, 5, false});
        r.session.endBatch();
        r.session.endBatch();                                                // two batches without the API record
        r.session.add(ApiRecord{5, kMainThread, kOrigin + 9, kOrigin + 11}); // too late
        r.session.endBatch();
        r.pop(kMainThread, 100);
        const auto trace = r.finish();
        QCOMPARE(trace->events.size(), std::size_t(1));
        QCOMPARE(trace->events.layer(0), kNoLayer);
        QCOMPARE(trace->events.deltaBytes(0), kMiB);
    }

    void rangesStillOpenEndAtTheLastTimeSeen()
    {
        Recording r;
        r.push(kMainThread, 0, "step:3");
        r.push(kMainThread, 10, "fwd:head");
        r.session.add(MemoryRecord{true, 0x10, kMiB, kOrigin + 50, 0, 0, 1, false});
        r.session.add(ApiRecord{1, kMainThread, kOrigin + 49, kOrigin + 51});
        r.session.endBatch();
        const auto trace = r.finish(); // the process exited inside its step
        QCOMPARE(trace->steps.size(), std::size_t(1));
        QCOMPARE(trace->steps[0], (Step{3, 0, 50}));
        QCOMPARE(trace->ranges.size(), std::size_t(1));
        QCOMPARE(trace->ranges[0].endNs, std::int64_t(50));
        QCOMPARE(layerOf(*trace, 0), std::string("head"));
    }

    void aReleaseWithoutItsSizeFreesTheWholeBlock()
    {
        Recording r;
        r.session.add(MemoryRecord{true, 0x10, 3 * kMiB, kOrigin + 5, 0, 0, 1, false});
        r.session.add(MemoryRecord{false, 0x10, 0, kOrigin + 9, 0, 0, 2, false});
        r.session.endBatch();
        const auto trace = r.finish();
        QCOMPARE(trace->events.size(), std::size_t(2));
        QCOMPARE(trace->events.deltaBytes(1), -3 * kMiB);
    }

    // The torch backend names the operator behind each block, and the autograd node running
    // it: the stack the file keeps for the allocation, written once per pair.
    void allocationsNameTheOperatorThatMadeThem()
    {
        Recording r;
        const auto allocation = [](std::uint64_t address, std::int64_t t, std::string_view op, std::string_view node) {
            MemoryRecord record{true, address, kMiB, kOrigin + t, 0, 0, 0, false, DeviceType::Cpu, kMainThread};
            record.op = op;
            record.node = node;
            return record;
        };
        const std::string sameTextElsewhere = "aten::mm";
        r.session.add(allocation(0x10, 1, "aten::addmm", {}));
        r.session.add(allocation(0x20, 2, "aten::mm", "MmBackward0"));
        r.session.add(allocation(0x30, 3, sameTextElsewhere, "MmBackward0"));
        r.session.add(allocation(0x40, 4, {}, {}));
        MemoryRecord release = allocation(0x10, 5, "aten::relu", {});
        release.allocation = false;
        r.session.add(release);
        r.session.endBatch();
        const auto trace = r.finish();
        QCOMPARE(trace->events.size(), std::size_t(5));
        const AllocationSites sites(trace->stacks);
        const auto siteOf = [&](std::size_t event) { return sites.label(sites.siteOf(trace->events.stack(event))); };
        QCOMPARE(siteOf(0), std::string("aten::addmm"));
        QCOMPARE(siteOf(1), std::string("aten::mm in MmBackward0"));
        QCOMPARE(trace->events.stack(2), trace->events.stack(1));
        QCOMPARE(trace->events.stack(3), StackTable::kEmptyStack);
        QCOMPARE(trace->events.stack(4), StackTable::kEmptyStack);
        QCOMPARE(trace->stacks.frames().size(), std::size_t(3));
    }

    // A free the backend never heard (made on a thread it does not listen to) shows when the
    // address is handed out again: the old block ends there, so the level does not keep it
    // forever and the peak is what was live.
    void anAddressHandedOutAgainEndsTheBlockThere()
    {
        Recording r;
        r.session.add(MemoryRecord{true, 0x10, 3 * kMiB, kOrigin + 5, 0, 0, 1, false});
        r.session.add(MemoryRecord{true, 0x10, 2 * kMiB, kOrigin + 7, 0, 0, 2, false});
        r.session.add(MemoryRecord{false, 0x10, 0, kOrigin + 9, 0, 0, 3, false});
        r.session.endBatch();
        const auto trace = r.finish();
        QCOMPARE(trace->events.size(), std::size_t(4));
        QCOMPARE(trace->events.deltaBytes(1), -3 * kMiB);
        QCOMPARE(trace->events.timeNs(1), trace->events.timeNs(2));
        QCOMPARE(trace->events.deltaBytes(2), 2 * kMiB);
        QCOMPARE(trace->events.deltaBytes(3), -2 * kMiB);
        std::int64_t level = 0;
        for (std::size_t i = 0; i < trace->events.size(); ++i)
            level += trace->events.deltaBytes(i);
        QCOMPARE(level, std::int64_t(0));
    }

    void segmentsOfTheCachingAllocatorAreReserved()
    {
        Recording r(true);
        r.session.add(MemoryRecord{true, 0x10, 20 * kMiB, kOrigin + 5, 0, 0, 1, false});
        r.session.add(MemoryRecord{false, 0x10, 20 * kMiB, kOrigin + 9, 0, 0, 2, false});
        r.session.endBatch();
        const auto trace = r.finish();
        QVERIFY(trace->events.empty());
        QCOMPARE(trace->reserved.size(), std::size_t(2));
        QCOMPARE(trace->reserved[0].deltaBytes, 20 * kMiB);
        QCOMPARE(trace->reserved[1].deltaBytes, -20 * kMiB);
    }

    void poolsAndKernels()
    {
        Recording r;
        r.session.add(PoolRecord{0xA000, 64 * kMiB, kOrigin + 1, 0});
        r.session.add(PoolRecord{0xA000, 16 * kMiB, kOrigin + 2, 0}); // trimmed
        r.session.add(PoolRecord{0xA000, 0, kOrigin + 3, 0});         // destroyed
        r.session.add(KernelRecord{"gemm", kOrigin + 10, kOrigin + 30, 0, 7, 9});
        r.session.add(KernelRecord{"gemm", kOrigin + 40, kOrigin + 45, 0, 7, 10});
        r.session.endBatch();
        const auto trace = r.finish();
        QCOMPARE(trace->reserved.size(), std::size_t(3));
        QCOMPARE(trace->reserved[0].deltaBytes, 64 * kMiB);
        QCOMPARE(trace->reserved[1].deltaBytes, -48 * kMiB);
        QCOMPARE(trace->reserved[2].deltaBytes, -16 * kMiB);
        QCOMPARE(trace->kernelNames, std::vector<std::string>{"gemm"});
        QCOMPARE(trace->kernels.size(), std::size_t(2));
        QCOMPARE(trace->kernels[1].beginNs, std::int64_t(40));
    }

    void deviceMemoryWhenTheDevicesAgree_data()
    {
        QTest::addColumn<QList<qint64>>("totals"); // what the driver says each device holds; 0: it cannot say
        QTest::addColumn<QList<int>>("devices");   // the device of each memory record, in order
        QTest::addColumn<bool>("segments");        // the native allocator's segments, written as reserved memory
        QTest::addColumn<QString>("live");         // device.memory committed with the first record; "-": none
        QTest::addColumn<QString>("finished");     // device.memory of the finished file
        const qint64 big = qint64(80) << 30;
        const qint64 small = qint64(40) << 30;
        const QString bigText = QString::number(big);
        QTest::addRow("one GPU") << QList<qint64>{big} << QList<int>{0, 0} << false << bigText << bigText;
        QTest::addRow("one GPU, the caching allocator's segments")
            << QList<qint64>{big} << QList<int>{0} << true << bigText << bigText;
        QTest::addRow("two GPUs of one size, both used")
            << QList<qint64>{big, big} << QList<int>{0, 1} << false << bigText << bigText;
        // Another device could still come: the key waits for the end.
        QTest::addRow("two GPUs of two sizes, one used")
            << QList<qint64>{big, small} << QList<int>{1, 1} << false << QStringLiteral("-") << QString::number(small);
        QTest::addRow("two GPUs of two sizes, both used")
            << QList<qint64>{big, small} << QList<int>{1, 0} << false << QStringLiteral("-") << QStringLiteral("-");
        QTest::addRow("the driver cannot size the GPU used")
            << QList<qint64>{big, 0} << QList<int>{1} << false << QStringLiteral("-") << QStringLiteral("-");
        QTest::addRow("the driver cannot size a GPU not used")
            << QList<qint64>{big, 0} << QList<int>{0} << false << QStringLiteral("-") << bigText;
        QTest::addRow("a device the driver does not list")
            << QList<qint64>{big} << QList<int>{1} << false << QStringLiteral("-") << QStringLiteral("-");
        QTest::addRow("no answer from the driver")
            << QList<qint64>{} << QList<int>{0} << false << QStringLiteral("-") << QStringLiteral("-");
        QTest::addRow("no memory records") << QList<qint64>{big} << QList<int>{} << false << QStringLiteral("-")
                                           << QStringLiteral("-");
    }

    // device.memory follows the Kineto importer's rule: the size of the GPUs that hold
    // memory, when the driver knows each and they agree. The driver is asked once, when
    // the first memory record is written.
    void deviceMemoryWhenTheDevicesAgree()
    {
        QFETCH(QList<qint64>, totals);
        QFETCH(QList<int>, devices);
        QFETCH(bool, segments);
        QFETCH(QString, live);
        QFETCH(QString, finished);
        int asked = 0;
        RecordingSession::Options options{kOrigin, segments, {}};
        options.deviceTotals = [&] {
            ++asked;
            std::vector<std::optional<std::int64_t>> sizes;
            for (const qint64 total : totals)
                sizes.push_back(total > 0 ? std::optional<std::int64_t>(total) : std::nullopt);
            return sizes;
        };
        Recording r(options);
        r.session.add(KernelRecord{"gemm", kOrigin + 1, kOrigin + 2, 0, 7, 1000}); // a kernel holds no memory
        for (qsizetype i = 0; i < devices.size(); ++i) {
            const auto correlation = static_cast<std::uint32_t>(i + 1);
            r.session.add(MemoryRecord{true, 0x1000 + std::uint64_t(i) * 0x100, kMiB, kOrigin + 10 * (i + 1),
                                       static_cast<std::uint32_t>(devices[i]), 7, correlation, false});
            r.session.add(ApiRecord{correlation, kMainThread, kOrigin + 10 * (i + 1) - 1, kOrigin + 10 * (i + 1) + 1});
            r.session.endBatch();
            if (i == 0) {
                r.writer.commit();
                QCOMPARE(metaOrNone(*TraceReader::read(r.path.toStdString()), "device.memory"), live);
            }
        }
        const auto trace = r.finish();
        QCOMPARE(metaOrNone(*trace, "device.memory"), finished);
        QCOMPARE(asked, devices.isEmpty() ? 0 : 1);
        QCOMPARE(trace->events.size() + trace->reserved.size(), std::size_t(devices.size()));
    }

    void markerActivityMakesRangesToo()
    {
        Recording r;
        r.session.add(MarkerRecord{MarkerRecord::Kind::Start, 1, "fwd:stem", kMainThread, kOrigin + 0});
        r.session.add(MarkerRecord{MarkerRecord::Kind::End, 1, {}, kMainThread, kOrigin + 100});
        r.session.endBatch();
        const auto trace = r.finish();
        QCOMPARE(trace->ranges.size(), std::size_t(1));
        QCOMPARE(trace->layers[trace->ranges[0].layer].path, std::string("stem"));
    }

    void manifestGivesKindsParametersAndToggles()
    {
        Recording r;
        r.push(kMainThread, 0, "fwd:blocks.0");
        r.pop(kMainThread, 10);
        r.session.applyManifest(parseManifest(R"({"format": "peaklens-manifest", "version": 1, "torch": "2.3.0",
            "checkpoint": ["blocks.0"], "chain": ["blocks.0", "blocks.1"],
            "modules": [{"path": "", "type": "GPT", "parameter_bytes": 300},
                        {"path": "blocks", "type": "ModuleList", "parameter_bytes": 200},
                        {"path": "blocks.0", "type": "Block", "parameter_bytes": 100},
                        {"path": "blocks.1", "type": "Block", "parameter_bytes": 100}]})"));
        const auto trace = r.finish();
        const auto block1 = trace->findLayer("blocks.1");
        QVERIFY(block1);
        QCOMPARE(trace->layers[*block1].kind, std::string("Block"));
        QCOMPARE(trace->layers[*block1].parameterBytes, std::int64_t(100));
        QCOMPARE(trace->layers[*trace->findLayer("blocks")].kind, std::string("ModuleList"));
        QCOMPARE(trace->metaValue("checkpoint"), std::string("blocks.0"));
        QCOMPARE(trace->metaValue("torch.version"), std::string("2.3.0"));
    }

    // The manifest tests/data/make_manifest.py wrote with the helper on a real model.
    void realManifest()
    {
        QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/manifest.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const Manifest manifest = parseManifest(file.readAll().toStdString());
        QCOMPARE(manifest.checkpoint, std::vector<std::string>{"blocks.1"});
        QCOMPARE(manifest.modules.size(), std::size_t(27)); // every submodule, not the model itself
        Recording r;
        r.session.applyManifest(manifest);
        const auto trace = r.finish();
        const auto attention = trace->findLayer("blocks.2.attn");
        QVERIFY(attention);
        QCOMPARE(trace->layers[*attention].kind, std::string("MultiheadAttention"));
        QCOMPARE(trace->layers[*attention].parameterBytes, std::int64_t((3 * 32 * 32 + 3 * 32 + 32 * 32 + 32) * 4));
        QCOMPARE(defaultChain(*trace).size(), std::size_t(3)); // blocks.0..2, as the helper's chain
    }

    void badManifest_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("not JSON") << QByteArray("{\"format\": ");
        QTest::newRow("another format") << QByteArray(R"({"format": "other", "modules": []})");
        QTest::newRow("modules not a list") << QByteArray(R"({"format": "peaklens-manifest", "modules": 3})");
        QTest::newRow("module without path") << QByteArray(R"({"format": "peaklens-manifest", "modules": [{"type": "X"}]})");
        QTest::newRow("array") << QByteArray("[1, 2]");
        QTest::newRow("path type not a string")
            << QByteArray(R"({"format": "peaklens-manifest", "modules": [{"path": 1, "type": "X"}]})");
        QTest::newRow("empty component") << QByteArray(
            R"({"format": "peaklens-manifest", "modules": [{"path": "a..b", "type": "X"}]})");
        QTest::newRow("negative parameters")
            << QByteArray(R"({"format": "peaklens-manifest", "modules": [{"path": "a", "type": "X", "parameter_bytes": -5}]})");
        QByteArray deep = "{\"format\": \"peaklens-manifest\", \"modules\": [{\"path\": \"a";
        for (int i = 0; i < 5000; ++i)
            deep += ".a";
        QTest::newRow("5000 levels deep") << (deep + "\", \"type\": \"X\"}]}");
    }

    void badManifest()
    {
        QFETCH(QByteArray, json);
        QVERIFY_THROWS_EXCEPTION(Error, parseManifest(json.toStdString()));
    }

    // A range whose path no trace can hold nests but names no layer.
    void absurdRangeNamesOnlyNest()
    {
        Recording r;
        std::string deep = "fwd:a";
        for (int i = 0; i < 5000; ++i)
            deep += ".a";
        r.push(kMainThread, 0, "fwd:outer");
        r.push(kMainThread, 10, deep.c_str());
        r.push(kMainThread, 20, "fwd:..");
        r.session.add(MemoryRecord{true, 0x10, kMiB, kOrigin + 30, 0, 0, 1, false});
        r.session.add(ApiRecord{1, kMainThread, kOrigin + 29, kOrigin + 31});
        r.session.endBatch();
        r.pop(kMainThread, 40);
        r.pop(kMainThread, 50);
        r.pop(kMainThread, 60);
        const auto trace = r.finish();
        QCOMPARE(trace->layers.size(), std::size_t(1));
        QCOMPARE(layerOf(*trace, 0), std::string("outer"));
    }

    void killedRecordingLeavesAReadableAttributedFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("killed.peaklens"));
        const auto killed = test::killAfterCommits(QStringLiteral("peaklens-test-sessionstreamer"), {path});
        QVERIFY2(killed.problem.isEmpty(), qPrintable(killed.problem));
        const quint64 committed = killed.committed;

        const auto trace = TraceReader::read(path.toStdString());
        QVERIFY(committed > 0);
        QVERIFY(trace->events.size() >= committed);
        QVERIFY(!trace->steps.empty());
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            if (layerOf(*trace, i) != "layer" || trace->events.phase(i) != Phase::Forward)
                QFAIL(qPrintable(QStringLiteral("event %1 lost its scope").arg(i)));
        }
    }
};

QTEST_GUILESS_MAIN(tst_RecordingSession)
#include "tst_recordingsession.moc"
