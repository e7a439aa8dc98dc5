// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"
#include "tracefiledamage.h"

#include "core/analysis/peakfinder.h"
#include "core/analysis/tracesummary.h"
#include "core/error.h"
#include "core/import/annotationranges.h"
#include "core/import/filebytes.h"
#include "core/import/traceloader.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <atomic>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

QString dataPath(const QString &name)
{
    return QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/") + name;
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class tst_Importers : public QObject
{
    Q_OBJECT

private slots:
    // Allocations belong to the innermost range open on their own thread, whatever other
    // threads are doing at the same time.
    void attributionFollowsTheAllocatingThread_data()
    {
        QTest::addColumn<int>("thread");
        QTest::addColumn<qint64>("time");
        QTest::addColumn<QString>("layer"); // empty: none
        QTest::addColumn<int>("phase");
        QTest::addRow("main thread, forward") << 0 << qint64(15) << QStringLiteral("blocks.0") << int(Phase::Forward);
        QTest::addRow("main thread, innermost range") << 0 << qint64(25) << QStringLiteral("blocks.0.fc1") << int(Phase::Forward);
        QTest::addRow("side thread at the same time") << 1 << qint64(25) << QString() << int(Phase::Optimizer);
        QTest::addRow("main thread, backward") << 0 << qint64(80) << QStringLiteral("blocks.0") << int(Phase::Backward);
        QTest::addRow("side thread after its range") << 1 << qint64(80) << QString() << int(Phase::Other);
        QTest::addRow("main thread between ranges") << 0 << qint64(55) << QString() << int(Phase::Other);
    }

    void attributionFollowsTheAllocatingThread()
    {
        QFETCH(int, thread);
        QFETCH(qint64, time);
        QFETCH(QString, layer);
        QFETCH(int, phase);
        TraceBuilder builder;
        const auto ranges = addAnnotations(builder, {{"step:3", true, 0, 0},
                                                     {"fwd:blocks.0", true, 10, 0},
                                                     {"fwd:blocks.0.fc1", true, 20, 0},
                                                     {"fwd:blocks.0.fc1", false, 30, 0},
                                                     {"fwd:blocks.0", false, 50, 0},
                                                     {"bwd:blocks.0", true, 60, 0},
                                                     {"bwd:blocks.0", false, 90, 0},
                                                     {"step:3", false, 100, 0},
                                                     {"opt", true, 20, 1},
                                                     {"opt", false, 70, 1}});
        QCOMPARE(ranges.size(), std::size_t(2));
        std::vector<MemoryEvent> events{MemoryEvent{time, 64, 0x1000}};
        assignScopes(events, ranges[static_cast<std::size_t>(thread)]);
        const Trace &trace = builder.current();
        QCOMPARE(events[0].layer == kNoLayer ? QString() : qs(trace.layers[events[0].layer].path), layer);
        QCOMPARE(int(events[0].phase), phase);
        QCOMPARE(trace.steps.size(), std::size_t(1));
        QCOMPARE(trace.steps[0].number, 3);
    }

    // Every fixture's generating script replays its events itself; PeakLens must agree.
    void peakMatchesAPlainReplay_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("peakBytes");
        QTest::addColumn<qint64>("peakTime");
        QTest::addColumn<int>("format");
        const QJsonObject expected = QJsonDocument::fromJson(readAll(dataPath(QStringLiteral("expected.json")))).object();
        QVERIFY(expected.size() >= 12);
        for (auto it = expected.begin(); it != expected.end(); ++it) {
            const QJsonObject figures = it.value().toObject();
            const QString name = it.key();
            int format = int(TraceFormat::TorchSnapshot);
            if (name.startsWith(QStringLiteral("kineto")))
                format = int(TraceFormat::KinetoTrace);
            else if (name.startsWith(QStringLiteral("memory_timeline")))
                format = int(TraceFormat::MemoryTimeline);
            else if (name.endsWith(QStringLiteral(".json")))
                format = int(TraceFormat::TorchSnapshotJson);
            QTest::addRow("%s", qPrintable(name)) << name << figures[QStringLiteral("peak_bytes")].toInteger()
                                                  << figures[QStringLiteral("peak_time_ns")].toInteger() << format;
        }
    }
    void peakMatchesAPlainReplay()
    {
        QFETCH(QString, file);
        QFETCH(qint64, peakBytes);
        QFETCH(qint64, peakTime);
        QFETCH(int, format);
        const std::string path = ss(dataPath(file));
        QCOMPARE(int(detectFormat(path)), format);
        const auto trace = loadTrace(path);
        const PeakReport report = findPeaks(*trace);
        QVERIFY(report.primary);
        QCOMPARE(report.devices[*report.primary].allocatedBytes, peakBytes);
        QCOMPARE(report.devices[*report.primary].timeNs, peakTime);
    }

    void snapshotCarriesItsStructure()
    {
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("snapshot_p4.pickle"))));
        QCOMPARE(trace->steps.size(), std::size_t(2));
        QCOMPARE(trace->steps[1].number, qint64(1));
        for (const char *layer : {"blocks.0", "blocks.1", "blocks.2"})
            QVERIFY2(trace->findLayer(layer), layer);
        // Annotations scope events: forward allocations of blocks.1 carry that layer.
        bool forwardInBlock1 = false;
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            if (trace->events.layer(i) == *trace->findLayer("blocks.1") && trace->events.phase(i) == Phase::Forward)
                forwardInBlock1 = true;
        }
        QVERIFY(forwardInBlock1);
        QCOMPARE(trace->markers.size(), std::size_t(2)); // oom and snapshot
        QCOMPARE(trace->markers[0].kind, MarkerKind::OutOfMemory);
        QCOMPARE(trace->markers[0].bytes, qint64(80) << 30);
        QCOMPARE(trace->devices().size(), std::size_t(2));
        // Frames come innermost first: the stack of the first allocation ends in "linear".
        const auto frames = trace->stacks.framesOf(trace->events.stack(trace->events.size() / 2));
        QVERIFY(!frames.empty());
        QVERIFY(!trace->reserved.empty());
        const TraceSummary summary = summarize(*trace);
        QVERIFY(summary.layers[*trace->findLayer("blocks.0")].activationBytes > 0);
    }

    void highAddressesSurvive()
    {
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("snapshot_high_addresses_p4.pickle"))));
        bool high = false;
        for (std::size_t i = 0; i < trace->events.size(); ++i)
            high = high || trace->events.addr(i) >= (std::uint64_t(1) << 63);
        QVERIFY(high);
    }

    // Segments from before the trace are reserved at its start at their own addresses, so
    // the allocator's layout is known; the reserved totals stay the file's evidence.
    // segments: the dump-time "segments" ("ADDR MiB [stream=S] [noaddress]" a line); trace:
    // "t=US ACTION ADDR MiB" entries; reserved: every reserved event, "US:±MiB@ADDR".
    void snapshotPlacesSegmentsFromBeforeItsTrace_data()
    {
        QTest::addColumn<bool>("expandable");
        QTest::addColumn<QString>("segments");
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QString>("reserved");
        QTest::addRow("dump-time segments the trace never touches, each at its address and stream")
            << false << QStringLiteral("0x10000000 20\n0x20000000 2 stream=7") << QStringLiteral("t=5 alloc 0x10000000 1")
            << QStringLiteral("5:+20@0x10000000 5:+2@0x20000000/7");
        QTest::addRow("a segment the trace reserves is not counted again")
            << false << QStringLiteral("0x10000000 20\n0x20000000 20") << QStringLiteral("t=1 segment_alloc 0x20000000 20")
            << QStringLiteral("1:+20@0x10000000 1:+20@0x20000000");
        QTest::addRow("a segment released but never reserved in the trace was there from its start")
            << false << QStringLiteral("0x20000000 2") << QStringLiteral("t=1 alloc 0x20000000 1\nt=2 segment_free 0x10000000 20")
            << QStringLiteral("1:+20@0x10000000 1:+2@0x20000000 2:-20@0x10000000");
        QTest::addRow("released, reserved again and kept until the dump: once from the start")
            << false << QStringLiteral("0x10000000 20")
            << QStringLiteral("t=2 segment_free 0x10000000 20\nt=3 segment_alloc 0x10000000 20")
            << QStringLiteral("2:+20@0x10000000 2:-20@0x10000000 3:+20@0x10000000");
        QTest::addRow("expandable: pages mapped in the trace leave the segment's older part")
            << true << QStringLiteral("0x10000000 40") << QStringLiteral("t=1 segment_map 0x11400000 20")
            << QStringLiteral("1:+20@0x10000000 1:+20@0x11400000");
        QTest::addRow("expandable: pages unmapped in the trace were mapped before it")
            << true << QStringLiteral("0x10000000 20") << QStringLiteral("t=1 segment_unmap 0x11400000 20")
            << QStringLiteral("1:+20@0x11400000 1:+20@0x10000000 1:-20@0x11400000");
        QTest::addRow("an old snapshot's segments without addresses stay at address 0")
            << false << QStringLiteral("0x10000000 20\n0x0 10 noaddress") << QStringLiteral("t=1 alloc 0x10000000 1")
            << QStringLiteral("1:+20@0x10000000 1:+10@0x0");
        QTest::addRow("a release of a range the trace reserved before cannot be placed")
            << false << QString()
            << QStringLiteral("t=1 segment_alloc 0x10000000 20\nt=2 segment_free 0x10000000 20\n"
                              "t=3 segment_free 0x10000000 20")
            << QStringLiteral("1:+20@0x0 1:+20@0x10000000 2:-20@0x10000000 3:-20@0x10000000");
        QTest::addRow("nothing is placed beyond what the totals show was there")
            << false << QString() << QStringLiteral("t=1 segment_alloc 0x20000000 10\nt=2 segment_free 0x10000000 10")
            << QStringLiteral("1:+10@0x20000000 2:-10@0x10000000");
    }

    void snapshotPlacesSegmentsFromBeforeItsTrace()
    {
        QFETCH(bool, expandable);
        QFETCH(QString, segments);
        QFETCH(QString, trace);
        QFETCH(QString, reserved);
        const auto mib = [](const QString &text) { return QString::number(text.toLongLong() << 20); };
        QStringList segmentJson;
        for (const QString &line : segments.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QStringList words = line.split(QLatin1Char(' '));
            const QString stream =
                line.contains(QStringLiteral("stream=")) ? line.section(QStringLiteral("stream="), 1, 1) : QStringLiteral("0");
            const QString address = line.contains(QStringLiteral("noaddress"))
                                        ? QString()
                                        : QStringLiteral("\"address\": %1, ").arg(words[0].toULongLong(nullptr, 16));
            segmentJson << QStringLiteral("{\"device\": 0, %1\"total_size\": %2, \"stream\": %3, \"blocks\": []}")
                               .arg(address, mib(words[1]), stream);
        }
        QStringList entryJson;
        for (const QString &line : trace.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QStringList words = line.split(QLatin1Char(' '));
            entryJson << QStringLiteral("{\"action\": \"%1\", \"addr\": %2, \"size\": %3, \"stream\": 0, \"time_us\": %4}")
                             .arg(words[1])
                             .arg(words[2].toULongLong(nullptr, 16))
                             .arg(mib(words[3]), words[0].mid(2));
        }
        const QString json = QStringLiteral("{\"allocator_settings\": {\"expandable_segments\": %1}, \"segments\": [%2], "
                                            "\"device_traces\": [[%3]]}")
                                 .arg(expandable ? 1 : 0)
                                 .arg(segmentJson.join(QStringLiteral(", ")), entryJson.join(QStringLiteral(", ")));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("snapshot.json"));
        test::writeBytes(path, json.toUtf8());
        const auto loaded = loadTrace(ss(path));
        QStringList printed;
        for (const ReservedEvent &event : loaded->reserved) {
            const std::uint64_t stream = loaded->lanes[event.lane].stream;
            printed << QStringLiteral("%1:%2%3@0x%4%5")
                           .arg(event.timeNs / 1000)
                           .arg(event.deltaBytes < 0 ? QLatin1Char('-') : QLatin1Char('+'))
                           .arg(std::abs(event.deltaBytes) >> 20)
                           .arg(QString::number(event.addr, 16), stream ? QStringLiteral("/%1").arg(stream) : QString());
        }
        QCOMPARE(printed.join(QLatin1Char(' ')), reserved);
    }

    void picklesAndJsonAgree()
    {
        const auto fromPickle = loadTrace(ss(dataPath(QStringLiteral("snapshot_p2.pickle"))));
        const auto fromJson = loadTrace(ss(dataPath(QStringLiteral("snapshot.json"))));
        const auto fromGzip = loadTrace(ss(dataPath(QStringLiteral("snapshot_p5.pickle.gz"))));
        QCOMPARE(fromJson->events, fromPickle->events);
        QCOMPARE(fromGzip->events, fromPickle->events);
        QVERIFY(fromJson->ranges == fromPickle->ranges);
    }

    // The header's deviceProperties say what the GPU holding the memory events can hold:
    // the capacity a follower warns against. Real traces of four GPUs, the V100 one of rank
    // 1 on cuda:1 with two devices listed.
    void kinetoDeviceMemoryFromTheHeader_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("H100") << QStringLiteral("kineto_h100_qwen_inference.pt.trace.json.gz") << qint64(85018279936);
        QTest::newRow("MI300X") << QStringLiteral("kineto_mi300x_normalization.pt.trace.json.gz") << qint64(206141652992);
        QTest::newRow("V100, rank 1 on cuda:1") << QStringLiteral("kineto_v100_rank1.pt.trace.json.gz") << qint64(34089730048);
        QTest::newRow("V100 DGXS") << QStringLiteral("kineto_v100_resnet50_2021.pt.trace.json.gz") << qint64(34084028416);
    }

    void kinetoDeviceMemoryFromTheHeader()
    {
        QFETCH(QString, file);
        QFETCH(qint64, bytes);
        const auto trace = loadTrace(ss(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + file));
        QCOMPARE(trace->metaValue("device.memory"), std::to_string(bytes));
    }

    void kinetoNamesLayersStepsAndPhases()
    {
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("kineto.pt.trace.json.gz"))));
        QCOMPARE(trace->metaValue("device.name"), std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(trace->steps.size(), std::size_t(2));
        QVERIFY(trace->findLayer("GPT_0.Block_1.Linear_1"));
        std::size_t forward = 0, backward = 0, optimizer = 0;
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            forward += trace->events.phase(i) == Phase::Forward;
            backward += trace->events.phase(i) == Phase::Backward;
            optimizer += trace->events.phase(i) == Phase::Optimizer;
        }
        QCOMPARE(forward, std::size_t(12));  // 2 steps x 2 blocks x 3 events
        QCOMPARE(backward, std::size_t(12)); // 2 steps x 2 backward functions x 3 events
        QCOMPARE(optimizer, std::size_t(4));
        QCOMPARE(trace->markers.size(), std::size_t(1));
        QVERIFY(!trace->reserved.empty());
        const auto linear = trace->findLayer("GPT_0.Block_0.Linear_0");
        QCOMPARE(summarize(*trace).layers[*linear].activationBytes, qint64(3) << 20);
    }

    // A Kineto thread is its pid and tid as text: numbers and strings that read the same are
    // one thread, whatever threads came between, and a module span names only its own
    // thread's allocations.
    void kinetoThreadsAreTheirText_data()
    {
        QTest::addColumn<QString>("thread"); // the allocation's pid and tid
        QTest::addColumn<QString>("layer");  // empty: none
        QTest::addRow("numbers") << QStringLiteral("\"pid\": 1, \"tid\": 2") << QStringLiteral("Linear_0");
        QTest::addRow("strings") << QStringLiteral("\"pid\": \"1\", \"tid\": \"2\"") << QStringLiteral("Linear_0");
        QTest::addRow("the other thread") << QStringLiteral("\"pid\": 1, \"tid\": 3") << QStringLiteral("ReLU_0");
        QTest::addRow("the other, a string tid") << QStringLiteral("\"pid\": 1, \"tid\": \"3\"") << QStringLiteral("ReLU_0");
        QTest::addRow("pid and tid swapped") << QStringLiteral("\"pid\": 2, \"tid\": 1") << QString();
        QTest::addRow("a third thread") << QStringLiteral("\"pid\": 1, \"tid\": 4") << QString();
    }

    void kinetoThreadsAreTheirText()
    {
        QFETCH(QString, thread);
        QFETCH(QString, layer);
        const QString json = QStringLiteral(
                                 R"({"traceEvents": [
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 2, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: ReLU_0", "pid": 1, "tid": 3, "ts": 0, "dur": 100},
  {"ph": "i", "name": "[memory]", "pid": 1, "tid": 3, "ts": 10, "args": {"Addr": 8192, "Bytes": 64, "Device Type": 1, "Device Id": 0}},
  {"ph": "i", "name": "[memory]", "pid": 1, "tid": 2, "ts": 20, "args": {"Addr": 12288, "Bytes": 64, "Device Type": 1, "Device Id": 0}},
  {"ph": "i", "name": "[memory]", %1, "ts": 50, "args": {"Addr": 4096, "Bytes": 64, "Device Type": 1, "Device Id": 0}}
]})")
                                 .arg(thread);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("threads.pt.trace.json"));
        test::writeBytes(path, json.toUtf8());
        const auto trace = loadTrace(ss(path));
        QCOMPARE(trace->events.size(), std::size_t(3));
        const auto layerOf = [&](std::size_t i) {
            const std::uint32_t l = trace->events.layer(i);
            return l == kNoLayer ? QString() : qs(trace->layers[l].path);
        };
        QCOMPARE(layerOf(0), QStringLiteral("ReLU_0"));
        QCOMPARE(layerOf(1), QStringLiteral("Linear_0"));
        QCOMPARE(layerOf(2), layer);
    }

    // More than one piece of the traceEvents array, with "}, {" inside strings and nested
    // lists of objects where a guessed cut would go wrong.
    void kinetoPiecesGiveTheSameEvents()
    {
        QByteArray json = "{\"traceEvents\": [";
        qint64 total = 0, peak = 0;
        const int events = 60000; // about 12 MB: three pieces or more
        for (int i = 0; i < events; ++i) {
            const qint64 bytes = (i % 3 == 2) ? -1024 * (i % 7 + 1) : 1024 * (i % 5 + 1);
            total += bytes;
            peak = std::max(peak, total);
            if (i)
                json += ",\n  ";
            json += QStringLiteral("{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": %1, "
                                   "\"note\": \"}, {\\\"trap\\\": 1}, {\", \"list\": [{\"a\": 1}, {\"b\": [2, {\"c\": 3}]}], "
                                   "\"args\": {\"Addr\": %2, \"Bytes\": %3, \"Total Allocated\": %4, "
                                   "\"Total Reserved\": 0, \"Device Type\": 1, \"Device Id\": 0}}")
                        .arg(i)
                        .arg(0x10000 + (i % 9) * 0x1000)
                        .arg(bytes)
                        .arg(total)
                        .toUtf8();
        }
        json += "], \"baseTimeNanoseconds\": 0}";
        QVERIFY(json.size() > (10 << 20));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("pieces.pt.trace.json"));
        test::writeBytes(path, json);
        const auto trace = loadTrace(ss(path));
        QCOMPARE(trace->events.size(), std::size_t(events));
        QCOMPARE(findPeaks(*trace).devices.at(0).allocatedBytes, peak);
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            if (trace->events.timeNs(i) != qint64(i) * 1000)
                QFAIL(qPrintable(QStringLiteral("event %1 is out of place").arg(i)));
        }
    }

    // A mapped file's pages an importer is done with leave memory and read again as the file
    // does (a byte the importer changed there included); bytes on the heap (an inflated
    // gzip) stay as they are.
    void bytesDoneWithReadAsTheFile_data()
    {
        QTest::addColumn<bool>("gzipped");
        QTest::addRow("a plain file, mapped") << false;
        QTest::addRow("a gzip file, inflated on the heap") << true;
    }
    void bytesDoneWithReadAsTheFile()
    {
        QFETCH(bool, gzipped);
        QByteArray content;
        for (int i = 0; content.size() < (3 << 20); ++i)
            content += QByteArray::number(i) + ' ';
        QTemporaryDir dir;
        QString path = dir.filePath(QStringLiteral("bytes"));
        test::writeBytes(path, content);
        if (gzipped) {
            QCOMPARE(std::system(QByteArray("gzip '" + path.toUtf8() + "'").constData()), 0);
            path += QStringLiteral(".gz");
        }
        FileBytes bytes = readFileBytes(ss(path), 64);
        QCOMPARE(bytes.size(), std::size_t(content.size()));
        const std::size_t middle = bytes.size() / 2;
        bytes.willRead(0, bytes.size());
        bytes.data()[middle] = '#';
        bytes.doneReading(middle - 100000, 200000);
        QCOMPARE(bytes.data()[middle], gzipped ? '#' : content[qsizetype(middle)]);
        bytes.data()[middle] = content[qsizetype(middle)];
        QVERIFY(bytes.view() == std::string_view(content.constData(), std::size_t(content.size())));
        for (std::size_t i = bytes.size(); i < bytes.capacity(); ++i)
            QCOMPARE(bytes.data()[i], '\0'); // the padding after it
    }

    void timelineSplitsByCategory()
    {
        const auto trace = loadTrace(ss(dataPath(QStringLiteral("memory_timeline.raw.json.gz"))));
        const PeakReport report = findPeaks(*trace);
        QCOMPARE(report.liveAtPeak->bytes, report.devices[0].allocatedBytes);
        qint64 parameters = 0;
        for (const LiveGroup &group : report.liveAtPeak->byCategory) {
            if (group.key == std::uint32_t(Category::Parameter))
                parameters = group.bytes;
        }
        QCOMPARE(parameters, qint64(40) << 20);
    }

    void badInputIsOneSentence_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("problem");
        const QStringList fixtures = {QStringLiteral("snapshot_p4.pickle"),    QStringLiteral("snapshot.json"),
                                      QStringLiteral("kineto.pt.trace.json"),  QStringLiteral("memory_timeline.json"),
                                      QStringLiteral("snapshot_p5.pickle.gz"), QStringLiteral("memory_timeline.raw.json.gz")};
        for (const QString &fixture : fixtures) {
            QTest::addRow("%s: cut in half", qPrintable(fixture))
                << fixture << QStringLiteral("half") << QStringLiteral("truncated");
            QTest::addRow("%s: bytes flipped", qPrintable(fixture)) << fixture << QStringLiteral("flip") << QString();
        }
        QTest::addRow("a PNG image") << QString() << QStringLiteral("png") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("JSON of something else")
            << QString() << QStringLiteral("json") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("gzip bomb") << QString() << QStringLiteral("bomb") << QStringLiteral("expands to more than");
        QTest::addRow("pickle of a class instance")
            << QString() << QStringLiteral("global") << QStringLiteral("asks to run Python code");
        QTest::addRow("Kineto memory event without args (found by fuzzing)")
            << QString() << QStringLiteral("noargs") << QStringLiteral("a memory event has no args");
        QTest::addRow("pickle that is no snapshot")
            << QString() << QStringLiteral("notsnapshot") << QStringLiteral("not a PyTorch memory snapshot");
        QTest::addRow("more devices than the trace model holds")
            << QString() << QStringLiteral("devices") << QStringLiteral("cannot be opened: The trace uses more than 1024");
    }
    void badInputIsOneSentence()
    {
        QFETCH(QString, fixture);
        QFETCH(QString, damage);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath(fixture.isEmpty() ? QStringLiteral("input") : fixture);
        QByteArray bytes = fixture.isEmpty() ? QByteArray() : readAll(dataPath(fixture));
        if (fixture.endsWith(QStringLiteral(".gz")) && damage == QLatin1String("half"))
            bytes = bytes.left(bytes.size() / 2);
        else if (fixture.endsWith(QStringLiteral(".gz")))
            bytes = qCompress(bytes).mid(4); // not gzip any more: zlib data, unreadable as a trace
        else if (damage == QLatin1String("half"))
            bytes = bytes.left(bytes.size() / 2);
        else if (damage == QLatin1String("flip"))
            for (qsizetype i = bytes.size() / 3; i < bytes.size(); i += 97)
                bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
        if (damage == QLatin1String("png"))
            bytes = QByteArray::fromHex("89504e470d0a1a0a0000000d49484452");
        else if (damage == QLatin1String("json"))
            bytes = "{\"name\": \"not a trace\", \"values\": [1, 2, 3]}";
        else if (damage == QLatin1String("bomb"))
            bytes = qCompress(QByteArray(64 << 20, ' '), 9); // replaced below by real gzip
        else if (damage == QLatin1String("global"))
            bytes =
                QByteArray::fromHex("800263636f6c6c656374696f6e730a4f726465726564446963740a71002952710158010000006171024b01732e");
        else if (damage == QLatin1String("noargs"))
            bytes = R"({"traceEvents": [{"ph": "i", "name": "[memory]", "ts": 1.0}]})";
        else if (damage == QLatin1String("devices")) {
            bytes = "{\"traceEvents\": [";
            for (int device = 0; device < 1100; ++device)
                bytes +=
                    QStringLiteral("%1{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Addr\": 1, \"Bytes\": 8, "
                                   "\"Device Type\": 1, \"Device Id\": %2}}")
                        .arg(device ? QStringLiteral(",") : QString())
                        .arg(device)
                        .toUtf8();
            bytes += "]}";
        } else if (damage == QLatin1String("notsnapshot"))
            bytes = QByteArray::fromHex("80025d7100284b014b02652e");
        test::writeBytes(path, bytes);
        if (damage == QLatin1String("bomb")) {
            const QByteArray command =
                "(printf '{\"traceEvents\": ['; head -c 100000000 /dev/zero | tr '\\0' ' ') | gzip -9 > '" + path.toUtf8() + "'";
            QCOMPARE(std::system(command.constData()), 0);
        }
        try {
            loadTrace(ss(path));
            // Flipped bytes may land in places that change values but not the format.
            QVERIFY2(damage == QLatin1String("flip"), "the file was accepted");
        } catch (const ImportError &error) {
            const QString message = qs(error.what());
            QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
            QVERIFY2(message.contains(problem), qPrintable(message));
            QVERIFY2(!message.contains(QLatin1Char('\n')), qPrintable(message));
        }
    }

    void cancellationStopsAnImport()
    {
        std::atomic<bool> cancel{true};
        Progress progress;
        progress.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(Cancelled, loadTrace(ss(dataPath(QStringLiteral("kineto.pt.trace.json"))), progress));
    }
};

QTEST_GUILESS_MAIN(tst_Importers)
#include "tst_importers.moc"
