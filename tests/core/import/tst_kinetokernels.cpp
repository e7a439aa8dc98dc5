// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"
#include "tracefiledamage.h"

#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"

#include <QTemporaryDir>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

// A memory event on the given device ("Device Type", "Device Id") at `ts`, as Kineto writes it.
QString memoryEvent(const QString &ts, int deviceType = 1, int deviceId = 0)
{
    return QStringLiteral("{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, "
                          "\"ts\": %1, \"args\": {\"Addr\": 4096, \"Bytes\": 256, \"Total Allocated\": 256, "
                          "\"Total Reserved\": 2097152, \"Device Type\": %2, \"Device Id\": %3}}")
        .arg(ts)
        .arg(deviceType)
        .arg(deviceId);
}

// A GPU activity: `args` is the text inside its args object, `row` its pid and tid.
QString gpuEvent(const QString &category, const QString &name, const QString &ts, const QString &dur, const QString &args,
                 const QString &row = QStringLiteral("\"pid\": 0, \"tid\": 7"))
{
    return QStringLiteral("{\"ph\": \"X\", \"cat\": \"%1\", \"name\": \"%2\", %3, \"ts\": %4, \"dur\": %5, \"args\": {%6}}")
        .arg(category, name, row, ts, dur, args);
}

QByteArray kinetoTrace(const QStringList &events, const QString &header = {})
{
    return QStringLiteral("{%1\"traceEvents\": [%2]}").arg(header, events.join(QStringLiteral(",\n"))).toUtf8();
}

using Loaded = test::LoadedTrace;

Loaded load(const QByteArray &json)
{
    return test::loadFromBytes(json, QStringLiteral("t.pt.trace.json"));
}

// "cuda:0/7 gemm 1000+2000": lane, name, begin and duration in ns, in the trace's order.
QString printKernels(const Trace &trace)
{
    QStringList lines;
    for (const Kernel &kernel : trace.kernels) {
        const Lane &lane = trace.lanes[kernel.lane];
        lines << QStringLiteral("%1/%2 %3 %4+%5")
                     .arg(qs(lane.device.toString()))
                     .arg(lane.stream)
                     .arg(qs(trace.kernelNames[kernel.name]))
                     .arg(kernel.beginNs)
                     .arg(kernel.endNs - kernel.beginNs);
    }
    return lines.join(QLatin1Char('\n'));
}

const QString kStream7 = QStringLiteral("\"device\": 0, \"stream\": 7");

} // namespace

// GPU kernels, copies and memsets of Kineto traces become kernels on lanes of their device
// and stream, on the memory events' clock.
class tst_KinetoKernels : public QObject
{
    Q_OBJECT

private slots:
    void gpuActivityBecomesKernels_data()
    {
        QTest::addColumn<QStringList>("events");
        QTest::addColumn<QString>("header"); // top-level keys before traceEvents
        QTest::addColumn<QString>("kernels");
        QTest::addColumn<QString>("note"); // import.kernels

        const QString memory = memoryEvent(QStringLiteral("1000"));
        QTest::addRow("kernels on two streams")
            << QStringList{memory,
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    kStream7),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("nccl"), QStringLiteral("1002"), QStringLiteral("5"),
                                    QStringLiteral("\"device\": 0, \"stream\": 14"), QStringLiteral("\"pid\": 0, \"tid\": 14"))}
            << QString() << QStringLiteral("cuda:0/7 gemm 1001000+2000\ncuda:0/14 nccl 1002000+5000") << QString();
        QTest::addRow("copies and memsets occupy their streams too")
            << QStringList{memory,
                           gpuEvent(QStringLiteral("gpu_memcpy"), QStringLiteral("Memcpy HtoD (Pageable -> Device)"),
                                    QStringLiteral("1001"), QStringLiteral("3"), kStream7),
                           gpuEvent(QStringLiteral("gpu_memset"), QStringLiteral("Memset (Device)"), QStringLiteral("1004"),
                                    QStringLiteral("1"), kStream7),
                           gpuEvent(QStringLiteral("cuda_runtime"), QStringLiteral("cudaLaunchKernel"), QStringLiteral("1000"),
                                    QStringLiteral("1"), QString(), QStringLiteral("\"pid\": 1, \"tid\": 1"))}
            << QString()
            << QStringLiteral("cuda:0/7 Memcpy HtoD (Pageable -> Device) 1001000+3000\ncuda:0/7 Memset (Device) 1004000+1000")
            << QString();
        QTest::addRow("time order, not file order")
            << QStringList{gpuEvent(QStringLiteral("kernel"), QStringLiteral("late"), QStringLiteral("1009"), QStringLiteral("1"),
                                    kStream7),
                           memory,
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("early"), QStringLiteral("1003"),
                                    QStringLiteral("1"), kStream7),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("middle"), QStringLiteral("1005"),
                                    QStringLiteral("1"), kStream7)}
            << QString()
            << QStringLiteral("cuda:0/7 early 1003000+1000\ncuda:0/7 middle 1005000+1000\ncuda:0/7 late 1009000+1000")
            << QString();
        QTest::addRow("fractional microseconds, exact at epoch magnitudes")
            << QStringList{memoryEvent(QStringLiteral("1428625746340.715")),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1428625746341.25"),
                                    QStringLiteral("18.112"), kStream7)}
            << QString() << QStringLiteral("cuda:0/7 gemm 1428625746341250+18112") << QString();
        QTest::addRow("times relative to baseTimeNanoseconds, given after the events")
            << QStringList{memory, gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001.5"),
                                            QStringLiteral("2"), kStream7)}
            << QStringLiteral("\"baseTimeNanoseconds\": 1700000000000000000, ")
            << QStringLiteral("cuda:0/7 gemm 1700000000001001500+2000") << QString();
        QTest::addRow("2021 traces: capitalised categories, the stream in the row's name")
            << QStringList{memory,
                           gpuEvent(QStringLiteral("Kernel"), QStringLiteral("conv"), QStringLiteral("1001"), QStringLiteral("4"),
                                    QStringLiteral("\"device\": 0"), QStringLiteral("\"pid\": 0, \"tid\": \"stream 7\"")),
                           gpuEvent(QStringLiteral("Memcpy"), QStringLiteral("Memcpy DtoH"), QStringLiteral("1006"),
                                    QStringLiteral("1"), kStream7, QStringLiteral("\"pid\": 0, \"tid\": \"stream 7\""))}
            << QString() << QStringLiteral("cuda:0/7 conv 1001000+4000\ncuda:0/7 Memcpy DtoH 1006000+1000") << QString();
        QTest::addRow("no device or stream in args: the GPU row's pid and tid")
            << QStringList{memoryEvent(QStringLiteral("1000"), 1, 1),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    QString(), QStringLiteral("\"pid\": 1, \"tid\": 9"))}
            << QString() << QStringLiteral("cuda:1/9 gemm 1001000+2000") << QString();
        QTest::addRow("a process's pid is no device: skipped, and said so")
            << QStringList{memory,
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    QStringLiteral("\"stream\": 7"), QStringLiteral("\"pid\": 4242, \"tid\": 7"))}
            << QString() << QString() << QStringLiteral("1 GPU kernel or copy was skipped: 1 naming no device.");
        QTest::addRow("no stream anywhere: skipped, and said so")
            << QStringList{memory,
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    QStringLiteral("\"device\": 0"), QStringLiteral("\"pid\": 0, \"tid\": \"GPU thread\"")),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("relu"), QStringLiteral("1004"), QStringLiteral("2"),
                                    kStream7)}
            << QString() << QStringLiteral("cuda:0/7 relu 1004000+2000")
            << QStringLiteral("1 GPU kernel or copy was skipped: 1 naming no stream.");
        QTest::addRow("a negative duration: skipped, and said so")
            << QStringList{memory,
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"),
                                    QStringLiteral("-3"), kStream7),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("relu"), QStringLiteral("1004"), QStringLiteral("0"),
                                    kStream7)}
            << QString() << QStringLiteral("cuda:0/7 relu 1004000+0")
            << QStringLiteral("1 GPU kernel or copy was skipped: 1 with a negative duration.");
        QTest::addRow("CUDA devices as the trace numbers them")
            << QStringList{memoryEvent(QStringLiteral("1000"), 1, 1),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    QStringLiteral("\"device\": 1, \"stream\": 7")),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("relu"), QStringLiteral("1002"), QStringLiteral("2"),
                                    QStringLiteral("\"device\": 0, \"stream\": 7"))}
            << QString() << QStringLiteral("cuda:1/7 gemm 1001000+2000\ncuda:0/7 relu 1002000+2000") << QString();
        QTest::addRow("ROCm agents moved onto the GPUs of the memory events")
            << QStringList{memoryEvent(QStringLiteral("1000"), 6, 0), memoryEvent(QStringLiteral("1000"), 6, 1),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    QStringLiteral("\"device\": 2, \"stream\": 0")),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("relu"), QStringLiteral("1002"), QStringLiteral("2"),
                                    QStringLiteral("\"device\": 3, \"stream\": 0"))}
            << QString() << QStringLiteral("cuda:0/0 gemm 1001000+2000\ncuda:1/0 relu 1002000+2000")
            << QStringLiteral("The kernels name ROCm agents, the CPUs counted first: agent 2 is shown as cuda:0, where its "
                              "memory events are.");
        QTest::addRow("ROCm without GPU memory events: devices as given")
            << QStringList{memoryEvent(QStringLiteral("1000"), 0, -1),
                           gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1001"), QStringLiteral("2"),
                                    QStringLiteral("\"device\": 2, \"stream\": 0"))}
            << QStringLiteral("\"roctracer_version\": 4, ") << QStringLiteral("cuda:2/0 gemm 1001000+2000") << QString();
    }

    void gpuActivityBecomesKernels()
    {
        QFETCH(QStringList, events);
        QFETCH(QString, header);
        QFETCH(QString, kernels);
        QFETCH(QString, note);
        const Loaded loaded = load(kinetoTrace(events, header));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        QCOMPARE(printKernels(*loaded.trace), kernels);
        QCOMPARE(qs(loaded.trace->metaValue("import.kernels")), note);
        // Memory stays where it was: kernels add lanes, never devices with memory.
        QVERIFY(!loaded.trace->devices().empty());
    }

    void kernelsShareTheMemoryEventsClock()
    {
        const Loaded loaded = load(kinetoTrace(
            {gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("20.25"), QStringLiteral("1"), kStream7),
             memoryEvent(QStringLiteral("20.25"))},
            QStringLiteral("\"baseTimeNanoseconds\": 5000, ")));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        QCOMPARE(loaded.trace->kernels.size(), std::size_t(1));
        QCOMPARE(loaded.trace->kernels[0].beginNs, loaded.trace->events.timeNs(loaded.trace->events.size() - 1));
        QCOMPARE(loaded.trace->kernels[0].beginNs, std::int64_t(25250));
    }

    void kernelNamesAreInterned()
    {
        QStringList events{memoryEvent(QStringLiteral("1000"))};
        for (int i = 0; i < 6; ++i)
            events << gpuEvent(QStringLiteral("kernel"), i % 2 ? QStringLiteral("gemm") : QStringLiteral("relu"),
                               QString::number(1001 + i), QStringLiteral("1"), kStream7);
        const Loaded loaded = load(kinetoTrace(events));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        QCOMPARE(loaded.trace->kernels.size(), std::size_t(6));
        QCOMPARE(loaded.trace->kernelNames, (std::vector<std::string>{"relu", "gemm"}));
    }

    // Times far outside any trace are damage: the whole file is refused with a sentence.
    void absurdDurationsAreRefused_data()
    {
        QTest::addColumn<QString>("dur");
        QTest::addColumn<QString>("problem");
        QTest::addRow("beyond any clock") << QStringLiteral("1e300")
                                          << QStringLiteral("is not a valid Kineto trace: a trace event has the time");
        QTest::addRow("not a number") << QStringLiteral("NaN") << QStringLiteral("is not a valid Kineto trace");
        QTest::addRow("half a year") << QStringLiteral("15552000000000") << QStringLiteral("more than 104 days apart");
    }

    void absurdDurationsAreRefused()
    {
        QFETCH(QString, dur);
        QFETCH(QString, problem);
        const Loaded loaded =
            load(kinetoTrace({memoryEvent(QStringLiteral("1000")), gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"),
                                                                            QStringLiteral("1001"), dur, kStream7)}));
        QVERIFY(!loaded.trace);
        QVERIFY2(loaded.problem.contains(problem), qPrintable(loaded.problem));
    }

    // The native file keeps what the import found: kernels, their names and their lanes.
    void nativeFileKeepsKernels()
    {
        QStringList events{memoryEvent(QStringLiteral("1000"))};
        events << gpuEvent(QStringLiteral("kernel"), QStringLiteral("gemm"), QStringLiteral("1003.5"), QStringLiteral("2"),
                           kStream7)
               << gpuEvent(QStringLiteral("gpu_memcpy"), QStringLiteral("Memcpy DtoD"), QStringLiteral("1001"),
                           QStringLiteral("1"), QStringLiteral("\"device\": 0, \"stream\": 14"));
        const Loaded loaded = load(kinetoTrace(events));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        QTemporaryDir dir;
        const std::string path = ss(dir.filePath(QStringLiteral("converted.peaklens")));
        TraceWriter::writeTrace(*loaded.trace, path);
        const auto again = loadTrace(path);
        QCOMPARE(printKernels(*again), printKernels(*loaded.trace));
        QCOMPARE(again->kernels, loaded.trace->kernels);
        QCOMPARE(again->kernelNames, loaded.trace->kernelNames);
        QCOMPARE(again->lanes, loaded.trace->lanes);
    }

    void realTraceKeepsKernelsThroughTheNativeFile()
    {
        const auto trace = loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_h100_qwen_inference.pt.trace.json.gz");
        QVERIFY(trace->kernels.size() > 1000);
        QTemporaryDir dir;
        const std::string path = ss(dir.filePath(QStringLiteral("qwen.peaklens")));
        TraceWriter::writeTrace(*trace, path);
        const auto again = loadTrace(path);
        QCOMPARE(again->kernels.size(), trace->kernels.size());
        QVERIFY(again->kernels == trace->kernels);
        QVERIFY(again->kernelNames == trace->kernelNames);
    }
};

QTEST_GUILESS_MAIN(tst_KinetoKernels)
#include "tst_kinetokernels.moc"
