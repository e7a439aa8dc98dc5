// SPDX-License-Identifier: Apache-2.0
// Inputs made to hang PeakLens or exhaust its memory, built here rather than committed:
// each must end in an ImportError naming the file, and what is real must still load.
#include "core/error.h"
#include "core/import/traceloader.h"
#include "core/report/summaryjson.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"
#include "testsupport.h"
#include "tracefiledamage.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

// Pickle protocol 4, written opcode by opcode.
struct PickleWriter
{
    std::string bytes = std::string("\x80\x04", 2);
    int memo = 0;
    int memoize()
    {
        bytes += '\x94';
        return memo++;
    }
    void text(std::string_view s)
    {
        bytes += '\x8c';
        bytes += static_cast<char>(s.size());
        bytes += s;
    }
    void integer(int value) // BININT
    {
        bytes += 'J';
        for (int i = 0; i < 4; ++i)
            bytes += static_cast<char>((static_cast<unsigned>(value) >> (8 * i)) & 0xFF);
    }
    void get(int index) // LONG_BINGET
    {
        bytes += 'j';
        for (int i = 0; i < 4; ++i)
            bytes += static_cast<char>((static_cast<unsigned>(index) >> (8 * i)) & 0xFF);
    }
    // A list holding `count` references to memo entry `item`, built with APPENDS.
    void listOf(int item, int count)
    {
        bytes += ']';
        memoize();
        bytes += '(';
        for (int i = 0; i < count; ++i)
            get(item);
        bytes += 'e';
    }
};

// {"device_traces": [E x 1000]} where E is one list of 100,000 references to one entry.
std::string sharedTraceList()
{
    PickleWriter p;
    p.bytes += '}';
    p.memoize();
    p.text("device_traces");
    p.bytes += '}'; // the one entry
    const int entry = p.memoize();
    p.bytes += '(';
    for (const auto &[key, value] : {std::pair{"action", -1}, {"addr", 4096}, {"size", 512}, {"stream", 0}}) {
        p.text(key);
        value < 0 ? p.text("alloc") : p.integer(value);
    }
    p.bytes += "u0"; // SETITEMS, then POP: what follows refers to it through the memo
    p.listOf(entry, 100000);
    const int list = p.memo - 1;
    p.bytes += '0';
    p.listOf(list, 1000);
    p.bytes += "s.";
    return p.bytes;
}

// {"segments": [S x 1000]} where S holds one list of 100,000 references to one active block.
std::string sharedSegmentList()
{
    PickleWriter p;
    p.bytes += '}';
    p.memoize();
    p.text("segments");
    p.bytes += '}';
    const int block = p.memoize();
    p.bytes += '(';
    p.text("size");
    p.integer(512);
    p.text("state");
    p.text("active_allocated");
    p.bytes += "u0";
    p.listOf(block, 100000);
    const int blocks = p.memo - 1;
    p.bytes += "0}";
    const int segment = p.memoize();
    p.bytes += '(';
    p.text("device");
    p.integer(0);
    p.text("address");
    p.integer(1 << 20);
    p.text("total_size");
    p.integer(1 << 20);
    p.text("stream");
    p.integer(0);
    p.text("blocks");
    p.get(blocks);
    p.bytes += "u0";
    p.listOf(segment, 1000);
    p.bytes += "s.";
    return p.bytes;
}

// Module spans nested `depth` deep, each name `nameLength` long.
std::string deepModuleSpans(int depth, int nameLength)
{
    std::string json = R"({"traceEvents": [)";
    for (int i = 0; i < depth; ++i) {
        json += i ? ",\n" : "\n";
        json += R"({"ph": "X", "cat": "python_function", "pid": 1, "tid": 1, "name": "nn.Module: )"
                + std::string(static_cast<std::size_t>(nameLength), char('a' + i % 26)) + R"(", "ts": )" + std::to_string(i)
                + R"(, "dur": )" + std::to_string(2 * (depth - i)) + "}";
    }
    json += R"(,
{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"Addr": 1, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 0, "Device Type": 1, "Device Id": 0}}]})";
    return json;
}

// Trace text declaring `lines` layers, each 1,000 modules deep in a path of about 4 KB.
std::string deepDottedPaths(int lines)
{
    std::string text;
    for (int i = 0; i < lines; ++i) {
        text += "layer m" + std::to_string(i);
        for (int d = 0; d < 1000; ++d)
            text += ".abc";
        text += "\n";
    }
    return text + "alloc a 1KiB\n";
}

QString writeTemp(const QTemporaryDir &dir, const QString &name, const std::string &bytes)
{
    const QString path = dir.filePath(name);
    test::writeBytes(path, QByteArray::fromStdString(bytes));
    return path;
}

} // namespace

class tst_HostileInput : public QObject
{
    Q_OBJECT

private slots:
    void refusedWithinTheLoadBudget_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("problem"); // in the message, after the path
        QTest::addRow("one trace list shared by 1,000 devices")
            << QStringLiteral("shared-trace.pickle") << QByteArray::fromStdString(sharedTraceList())
            << QStringLiteral("(building trace entries)");
        QTest::addRow("one segment list shared 1,000 times")
            << QStringLiteral("shared-segments.pickle") << QByteArray::fromStdString(sharedSegmentList())
            << QStringLiteral("(building segment blocks)");
        QTest::addRow("module spans 1,000 deep with 4 KB names")
            << QStringLiteral("deep.pt.trace.json") << QByteArray::fromStdString(deepModuleSpans(1000, 4000))
            << QStringLiteral("module spans nest into a path of more than 4096 bytes");
        QTest::addRow("dotted layer paths 1,000 deep, 2,000 of them")
            << QStringLiteral("deep.pltxt") << QByteArray::fromStdString(deepDottedPaths(2000))
            << QStringLiteral("(building layer paths)");
    }
    void refusedWithinTheLoadBudget()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, content);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = writeTemp(dir, name, content.toStdString());
        try {
            loadTrace(ss(path));
            QFAIL("the crafted file was loaded");
        } catch (const ImportError &error) {
            const QString message = QString::fromStdString(error.what());
            QVERIFY2(message.startsWith(path + QStringLiteral(": ")), error.what());
            QVERIFY2(message.contains(problem), error.what());
        }
    }

    // Times so far apart that durations and their sums would overflow are refused as damage,
    // rather than shown as a step of -1 ns or a forward of -4.6e18 ns.
    void timesThatWouldOverflowAreRefused()
    {
        QTemporaryDir dir;
        const QString path = writeTemp(dir, QStringLiteral("far.pltxt"), "alloc a 8\n+17280000s free a\n");
        try {
            loadTrace(ss(path));
            QFAIL("a trace spanning 200 days was loaded");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromStdString(error.what()).startsWith(path + QStringLiteral(": ")), error.what());
            QVERIFY2(QString::fromStdString(error.what()).contains(QStringLiteral("more than 104 days apart")), error.what());
        }
        TraceBuilder whole;
        whole.addStep(Step{0, INT64_MIN, INT64_MAX});
        QVERIFY_THROWS_EXCEPTION(Error, whole.finish());
        TraceBuilder backwards;
        backwards.lane(Lane{});
        backwards.kernelName("gemm");
        QVERIFY_THROWS_EXCEPTION(Error, backwards.addKernel(Kernel{0, 0, 10, 5}));
        TraceBuilder fine;
        fine.addStep(Step{0, 1'700'000'000'000'000'000, 1'700'000'000'000'000'000 + TraceBuilder::kMaxSpanNs});
        QCOMPARE(fine.finish()->steps.size(), std::size_t(1));
    }

    // A byte-order mark some editors write is not part of the format: the file reads as without.
    // Bytes after the end of a Kineto trace's JSON or a pickle's STOP are ignored, and said so.
    void editorsAndTrailingBytes_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QByteArray>("before");
        QTest::addColumn<QByteArray>("after");
        QTest::addColumn<QString>("warning");
        const QByteArray bom("\xEF\xBB\xBF");
        for (const char *fixture : {"snapshot.json", "kineto.pt.trace.json", "memory_timeline.json", "modelled-step.pltxt"})
            QTest::addRow("byte-order mark before %s", fixture)
                << QString::fromLatin1(fixture) << bom << QByteArray() << QString();
        QTest::addRow("bytes after a Kineto trace")
            << QStringLiteral("kineto.pt.trace.json") << QByteArray() << QByteArray("\n{\"more\": 1}")
            << QStringLiteral("11 bytes after the end of the JSON were ignored.");
        QTest::addRow("bytes after a pickle's STOP")
            << QStringLiteral("snapshot_p4.pickle") << QByteArray() << QByteArray("GARBAGE")
            << QStringLiteral("7 bytes after the end of the pickle were ignored.");
    }
    void editorsAndTrailingBytes()
    {
        QFETCH(QString, fixture);
        QFETCH(QByteArray, before);
        QFETCH(QByteArray, after);
        QFETCH(QString, warning);
        QFile original(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/") + fixture);
        QVERIFY(original.open(QIODevice::ReadOnly));
        const QByteArray content = original.readAll();
        QTemporaryDir dir;
        const auto plain = loadTrace(ss(original.fileName()));
        const auto changed = loadTrace(ss(writeTemp(dir, fixture, QByteArray(before + content + after).toStdString())));
        QCOMPARE(changed->events.size(), plain->events.size());
        QCOMPARE(changed->layers.size(), plain->layers.size());
        QCOMPARE(qs(changed->metaValue(metakey::ImportWarnings)), warning);
    }

    // The same shapes at a size real traces have still load.
    void realSizesStillLoad()
    {
        QTemporaryDir dir;
        const auto spans = loadTrace(ss(writeTemp(dir, QStringLiteral("ok.pt.trace.json"), deepModuleSpans(40, 20))));
        QVERIFY(spans->layers.size() >= 40);
        const auto paths = loadTrace(ss(writeTemp(dir, QStringLiteral("ok.pltxt"), deepDottedPaths(3))));
        QCOMPARE(paths->layers.size(), std::size_t(3 * 1001));
    }

    void budgetScalesWithTheInput()
    {
        QCOMPARE(LoadBudget::limitFor(0), LoadBudget::kBaseBytes);
        QCOMPARE(LoadBudget::limitFor(1 << 20), LoadBudget::kBaseBytes + (std::uint64_t(16) << 20));
        QVERIFY(LoadBudget::limitFor(UINT64_MAX) >= LoadBudget::kBaseBytes); // no overflow
        // Outside a load, nothing is limited.
        LoadBudget::charge(UINT64_MAX / 2, "a test");
        LoadBudget::Scope scope("x.pickle", 0);
        LoadBudget::charge(LoadBudget::kBaseBytes, "half");
        QVERIFY_THROWS_EXCEPTION(ImportError, LoadBudget::charge(1, "one byte more"));
        // Time: 30 s plus a second per MiB; a fresh load is well inside it.
        QCOMPARE(LoadBudget::timeLimitFor(0), std::chrono::seconds(30));
        QCOMPARE(LoadBudget::timeLimitFor(std::uint64_t(100) << 20), std::chrono::seconds(130));
        QVERIFY(!LoadBudget::timeIsUp());
        LoadBudget::checkTime();
    }

    // A pipe is read once, whole: the same trace as from the file.
    void pipedInputLoads()
    {
        const QString fixture = QFINDTESTDATA("../../data/snapshot_p4.pickle");
        QVERIFY(!fixture.isEmpty());
        std::ifstream in(ss(fixture), std::ios::binary);
        const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        int ends[2];
        QCOMPARE(::pipe(ends), 0);
        std::thread writer([&] {
            std::size_t done = 0;
            while (done < content.size()) {
                const ssize_t wrote = ::write(ends[1], content.data() + done, content.size() - done);
                if (wrote <= 0)
                    break;
                done += static_cast<std::size_t>(wrote);
            }
            ::close(ends[1]);
        });
        std::shared_ptr<const Trace> piped;
        try {
            piped = loadTrace("/proc/self/fd/" + std::to_string(ends[0]));
        } catch (...) {
            writer.join();
            ::close(ends[0]);
            throw;
        }
        writer.join();
        ::close(ends[0]);
        const auto direct = loadTrace(ss(fixture));
        QCOMPARE(piped->events.size(), direct->events.size());
        QCOMPARE(piped->layers.size(), direct->layers.size());
    }

    // A FIFO nobody writes to, /dev/zero and a directory end with a sentence, never a hang.
    void streamsThatNeverDeliverEnd_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("problem");
        QTest::addRow("idle FIFO") << QStringLiteral("fifo") << QStringLiteral("delivered no data");
        QTest::addRow("endless zeros") << QStringLiteral("/dev/zero") << QStringLiteral("is not a trace PeakLens can read");
        QTest::addRow("directory") << QStringLiteral("dir") << QStringLiteral("is a directory");
    }
    void streamsThatNeverDeliverEnd()
    {
        QFETCH(QString, kind);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        QString path = kind;
        if (kind == QStringLiteral("fifo")) {
            path = dir.filePath(QStringLiteral("idle.fifo"));
            QCOMPARE(::mkfifo(ss(path).c_str(), 0600), 0);
        } else if (kind == QStringLiteral("dir")) {
            path = dir.path();
        }
        try {
            loadTrace(ss(path));
            QFAIL("a stream without a trace was loaded");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromStdString(error.what()).contains(problem), error.what());
        }
    }

    // A valid snapshot at a path that is not UTF-8: its summary is valid JSON that keeps the byte.
    void latin1PathGivesValidJson()
    {
        const QString fixture = QFINDTESTDATA("../../data/snapshot_p4.pickle");
        QTemporaryDir dir;
        const std::string path = ss(dir.path()) + "/caf\xE9.pickle";
        std::ifstream in(ss(fixture), std::ios::binary);
        std::ofstream(path, std::ios::binary) << in.rdbuf();
        const auto trace = loadTrace(path);
        const std::string text = summaryToJson(*trace, summarize(*trace), std::nullopt);
        const auto parsed = nlohmann::json::parse(text);
        QVERIFY(parsed.dump().find("caf\\\\xE9.pickle") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(tst_HostileInput)
#include "tst_hostileinput.moc"
