// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/allocationsites.h"
#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"
#include "core/plan/costmodel.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <map>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

QString corpusPath(const QString &name)
{
    return QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + name;
}

// What tests/data/real/expected.py computed from each file's own evidence.
QJsonObject expectedFigures()
{
    QFile file(corpusPath(QStringLiteral("expected.json")));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

// Files others recorded on real GPUs (tests/data/real/README.md says where from):
// PeakLens must read the same figures the files themselves hold.
class tst_RealCorpus : public QObject
{
    Q_OBJECT

private slots:
    void peaksEqualTheFilesOwnEvidence_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QJsonObject>("devices");
        const QJsonObject expected = expectedFigures();
        QVERIFY(expected.size() >= 10);
        for (auto it = expected.begin(); it != expected.end(); ++it)
            QTest::newRow(qPrintable(it.key())) << it.key() << it.value().toObject()[QStringLiteral("devices")].toObject();
    }

    void peaksEqualTheFilesOwnEvidence()
    {
        QFETCH(QString, file);
        QFETCH(QJsonObject, devices);
        const auto trace = loadTrace(ss(corpusPath(file)));
        const PeakReport report = findPeaks(*trace);
        QStringList seen;
        for (const DevicePeak &peak : report.devices) {
            const QString device = qs(peak.device.toString());
            seen << device;
            QVERIFY2(devices.contains(device), qPrintable(device + QStringLiteral(" is not in the file")));
            const QJsonObject want = devices[device].toObject();
            QCOMPARE(peak.allocatedBytes, want[QStringLiteral("peak_bytes")].toInteger());
            const QJsonValue reserved = want[QStringLiteral("reserved_peak_bytes")];
            QCOMPARE(peak.reservedBytes.has_value(), !reserved.isNull());
            if (peak.reservedBytes)
                QCOMPARE(*peak.reservedBytes, reserved.toInteger());
        }
        QCOMPARE(seen.size(), devices.size());
        // What is live at the peak adds up to it.
        QCOMPARE(report.liveAtPeak->bytes, report.devices[*report.primary].allocatedBytes);
    }

    // Layer names a person reads: no wrapper's frame (torch's module calls, accelerate's
    // hooks, peft, transformers' decorators), no bare number, at most ten levels, no part
    // over 48 characters; every corpus file.
    void layerNamesAreReadable_data()
    {
        QTest::addColumn<QString>("file");
        const QJsonObject expected = expectedFigures();
        for (auto it = expected.begin(); it != expected.end(); ++it)
            QTest::newRow(qPrintable(it.key())) << it.key();
    }

    void layerNamesAreReadable()
    {
        QFETCH(QString, file);
        const auto trace = loadTrace(ss(corpusPath(file)));
        const QStringList wrappers = {
            QStringLiteral("module"),          QStringLiteral("hooks"),      QStringLiteral("generic"),
            QStringLiteral("deprecation"),     QStringLiteral("peft_model"), QStringLiteral("tuners_utils"),
            QStringLiteral("modeling_layers"), QStringLiteral("eval_frame"), QStringLiteral("checkpoint"),
            QStringLiteral("_contextlib"),     QStringLiteral("functools"),  QStringLiteral("contextlib")};
        for (const Layer &layer : trace->layers) {
            const QString path = qs(layer.path);
            const QStringList parts = path.split(QLatin1Char('.'));
            QVERIFY2(parts.size() <= 10, qPrintable(path));
            for (const QString &part : parts) {
                QVERIFY2(part.toUtf8().size() <= 48, qPrintable(path));
                bool number = false;
                part.toLongLong(&number);
                QVERIFY2(!number && !part.isEmpty(), qPrintable(path));
                QVERIFY2(!wrappers.contains(part.section(QLatin1Char(':'), 0, 0)), qPrintable(path));
            }
        }
    }

    // Kernels, copies and memsets per device stream, on the memory events' clock: the first
    // and last begin after the first memory event (the trace's earliest event that is not
    // memory from before profiling).
    void kernelsEqualTheFilesOwnEvidence_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QJsonObject>("kernels");
        const QJsonObject expected = expectedFigures();
        int withKernels = 0;
        for (auto it = expected.begin(); it != expected.end(); ++it) {
            const QJsonObject kernels = it.value().toObject()[QStringLiteral("kernels")].toObject();
            withKernels += !kernels.isEmpty();
            QTest::newRow(qPrintable(it.key())) << it.key() << kernels;
        }
        QVERIFY(withKernels >= 4);
    }

    void kernelsEqualTheFilesOwnEvidence()
    {
        QFETCH(QString, file);
        QFETCH(QJsonObject, kernels);
        const auto trace = loadTrace(ss(corpusPath(file)));
        QVERIFY(std::is_sorted(trace->kernels.begin(), trace->kernels.end(),
                               [](const Kernel &a, const Kernel &b) { return a.beginNs < b.beginNs; }));
        if (kernels.isEmpty()) {
            QVERIFY(trace->kernels.empty());
            return;
        }
        const auto beforeTrace =
            std::find(trace->stacks.frames().begin(), trace->stacks.frames().end(), Frame{std::string(kBeforeTrace), "", 0});
        std::optional<std::int64_t> firstMemoryNs;
        for (std::size_t i = 0; i < trace->events.size() && !firstMemoryNs; ++i) {
            const auto frames = trace->stacks.framesOf(trace->events.stack(i));
            const bool synthetic = frames.size() == 1 && beforeTrace != trace->stacks.frames().end()
                                   && frames.front() == static_cast<std::uint32_t>(beforeTrace - trace->stacks.frames().begin());
            if (!synthetic)
                firstMemoryNs = trace->events.timeNs(i);
        }
        QVERIFY(firstMemoryNs);
        QCOMPARE(qint64(*firstMemoryNs), kernels[QStringLiteral("first_memory_ns")].toInteger());

        struct Seen
        {
            std::int64_t count = 0, first = INT64_MAX, last = INT64_MIN;
        };
        std::map<QString, Seen> lanes;
        for (const Kernel &kernel : trace->kernels) {
            const Lane &lane = trace->lanes[kernel.lane];
            Seen &seen = lanes[qs(lane.device.toString()) + QStringLiteral(" stream %1").arg(lane.stream)];
            ++seen.count;
            seen.first = std::min(seen.first, kernel.beginNs - *firstMemoryNs);
            seen.last = std::max(seen.last, kernel.beginNs - *firstMemoryNs);
        }
        const QJsonObject want = kernels[QStringLiteral("lanes")].toObject();
        QStringList names;
        for (const auto &[name, seen] : lanes)
            names << name;
        QCOMPARE(names, want.keys());
        for (const auto &[name, seen] : lanes) {
            const QJsonObject lane = want[name].toObject();
            QCOMPARE(qint64(seen.count), lane[QStringLiteral("count")].toInteger());
            QCOMPARE(qint64(seen.first), lane[QStringLiteral("first_begin_after_memory_ns")].toInteger());
            QCOMPARE(qint64(seen.last), lane[QStringLiteral("last_begin_after_memory_ns")].toInteger());
        }
        // Each device's kernels sit where its memory is.
        const std::vector<Device> memoryDevices = trace->devices();
        for (const Kernel &kernel : trace->kernels)
            QVERIFY(std::find(memoryDevices.begin(), memoryDevices.end(), trace->lanes[kernel.lane].device)
                    != memoryDevices.end());
    }

    // Real snapshots' stacks start with the unwinder, the caching allocator, the dispatcher
    // and CPython (Kineto's with the interpreter's start-up and the operators); the sites
    // at the peak must name the user's own code instead.
    void topSitesNameUserCode_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expected"); // user sites among the top five, in order
        QTest::addRow("a training step") << QStringLiteral("snapshot_cs336_medium_train.pickle.gz")
                                         << QStringList{QStringLiteral("step (optimizer.py:80)"),
                                                        QStringLiteral("step (optimizer.py:77)"),
                                                        QStringLiteral("step (optimizer.py:76)")};
        QTest::addRow("a forward pass") << QStringLiteral("snapshot_cs336_forward_fp32.pickle.gz")
                                        << QStringList{QStringLiteral("SiLU (swiglu.py:10)"),
                                                       QStringLiteral("forward (swiglu.py:32)"),
                                                       QStringLiteral("forward (swiglu.py:33)"),
                                                       QStringLiteral("forward (rmsnorm.py:24)")};
        QTest::addRow("a Kineto trace with Python stacks")
            << QStringLiteral("kineto_h100_qwen_inference.pt.trace.json.gz")
            << QStringList{QStringLiteral("forward (modeling_qwen2.py:150)"),
                           QStringLiteral("apply_rotary_pos_emb (modeling_qwen2.py:68)"),
                           QStringLiteral("forward (modeling_qwen2.py:56)"), QStringLiteral("forward (modeling_qwen2.py:243)")};
        QTest::addRow("a Kineto trace of a training test")
            << QStringLiteral("kineto_mi300x_normalization.pt.trace.json.gz")
            << QStringList{QStringLiteral("forward (test_perf_model.py:35)"),
                           QStringLiteral("create_normalization_layer_trace (test_perf_model.py:64)")};
        QTest::addRow("a KV-cache experiment")
            << QStringLiteral("snapshot_kv_cache_state.pickle.gz")
            << QStringList{QStringLiteral("update_new (cache_utils_V2.py:224)"),
                           QStringLiteral("update_new (cache_utils_V2.py:225)"),
                           QStringLiteral("my_resduialquant (myquant.py:128)"), QStringLiteral("ontbitquant (myquant.py:14)")};
    }

    void topSitesNameUserCode()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, expected);
        const auto trace = loadTrace(ss(corpusPath(file)));
        const PeakReport report = findPeaks(*trace);
        const AllocationSites sites(trace->stacks);
        QStringList user;
        for (std::size_t i = 0; i < std::min<std::size_t>(5, report.liveAtPeak->bySite.size()); ++i) {
            const std::uint32_t site = report.liveAtPeak->bySite[i].key;
            const QString label = qs(sites.label(site));
            for (const char *internal : {"unwind", "CachingAllocator", "_PyEval", "Register", "wrap_kernel", "??"})
                QVERIFY2(!label.contains(QLatin1String(internal)), qPrintable(label));
            if (sites.site(site).kind == SiteKind::User)
                user << label;
        }
        QCOMPARE(user, expected);
    }

    // Files recorded without PeakLens's helper still get phases and layers: from the
    // call stacks of snapshots, from the spans of Kineto traces. The counts were taken
    // from the files by a separate reading (the frames of each allocation; the spans
    // around each memory event on its thread, and for a step's allocations before its
    // first backward span, the forward).
    void phasesAndLayersWithoutTheHelper_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("phases"); // allocations on the peak's device in forward, backward, optimizer
        QTest::addColumn<QString>("chain");  // the default chain: first, last, how many
        QTest::addRow("snapshot of a training step")
            << QStringLiteral("snapshot_cs336_medium_train.pickle.gz") << QStringLiteral("1290 2170 3066")
            << QStringLiteral("nsys_profile:142.model:253[0] .. nsys_profile:142.model:253[23] (24)");
        // Python frames only; the backward's allocations (on the autograd engine's thread) have none.
        QTest::addRow("snapshot of a training step recorded on Windows")
            << QStringLiteral("snapshot_windows_cs336_train.pickle.gz") << QStringLiteral("654 1067 0")
            << QStringLiteral("benchmarking_script:65.model:253[0] .. benchmarking_script:65.model:253[11] (12)");
        QTest::addRow("snapshot of a forward pass")
            << QStringLiteral("snapshot_cs336_forward_fp32.pickle.gz") << QStringLiteral("681 0 0")
            << QStringLiteral("benchmark:140.transformer_lm:56[0] .. benchmark:140.transformer_lm:56[11] (12)");
        QTest::addRow("Kineto trace of 2-GPU training")
            << QStringLiteral("kineto_v100_rank1.pt.trace.json.gz") << QStringLiteral("4295 9090 0") << QString();
        QTest::addRow("Kineto trace of inference with module spans")
            << QStringLiteral("kineto_h100_qwen_inference.pt.trace.json.gz") << QStringLiteral("1125 0 0")
            << QStringLiteral("Qwen2Model_0.Qwen2DecoderLayer_0 .. Qwen2Model_0.Qwen2DecoderLayer_23 (24)");
    }

    void phasesAndLayersWithoutTheHelper()
    {
        QFETCH(QString, file);
        QFETCH(QString, phases);
        QFETCH(QString, chain);
        const auto trace = loadTrace(ss(corpusPath(file)));
        const PeakReport report = findPeaks(*trace);
        const Device device = report.devices[*report.primary].device;
        std::array<int, kPhaseCount> count{};
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            if (trace->events.deltaBytes(i) > 0 && trace->lanes[trace->events.lane(i)].device == device)
                ++count[std::size_t(trace->events.phase(i))];
        }
        QCOMPARE(QStringLiteral("%1 %2 %3")
                     .arg(count[std::size_t(Phase::Forward)])
                     .arg(count[std::size_t(Phase::Backward)])
                     .arg(count[std::size_t(Phase::Optimizer)]),
                 phases);
        const auto layers = defaultChain(*trace);
        const QString found = layers.empty()
                                  ? QString()
                                  : QStringLiteral("%1 .. %2 (%3)")
                                        .arg(qs(trace->layers[layers.front()].path), qs(trace->layers[layers.back()].path))
                                        .arg(layers.size());
        QCOMPARE(found, chain);
        for (const Layer &layer : trace->layers)
            QVERIFY2(layer.path.find("ProfilerStep") == std::string::npos && layer.path.find("nccl") == std::string::npos
                         && layer.path.find("Optimizer") == std::string::npos,
                     layer.path.c_str());
    }
};

QTEST_GUILESS_MAIN(tst_RealCorpus)
#include "tst_realcorpus.moc"
