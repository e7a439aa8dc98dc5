// SPDX-License-Identifier: Apache-2.0
// A pickled snapshot read in one pass (entries and segments read as decoded, then
// released) gives the trace that reading the whole document first gives, on every fixture
// and on written snapshots of every layout the one pass has to follow; bad pickles give
// one sentence naming the file, the problem and the byte.
#include "testsupport.h"

#include "core/error.h"
#include "core/import/filebytes.h"
#include "core/import/pickle/snapshotstream.h"
#include "core/import/pickle/unpickler.h"
#include "core/import/torchsnapshot.h"
#include "core/import/traceloader.h"

#include <QDir>

#include <atomic>
#include <map>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

// A memory snapshot pickled opcode by opcode, as Python's pickler (protocol 4) writes what
// torch.cuda.memory._dump_snapshot returns: strings and frame lists memoized when first
// written and referred to afterwards, lists filled in batches.
struct SnapshotShape
{
    std::vector<int> devices{5000}; // trace entries per device
    int batch = 1000;               // items per APPENDS
    int segments = 0;
    int blocksPerSegment = 0;
    bool tracesFirst = false;          // "device_traces" before "segments", as sorted keys put them
    bool repeatFirstEntry = false;     // the last batch lists the first entry again
    bool framesHoldThemselves = false; // one frame list holds itself
    bool changeFirstEntry = false;     // the first entry gains a key once the traces are written
    std::string inject;                // raw bytes written before the 2,500th entry
    bool framed = false;               // FRAME opcodes between others
};

class SnapshotWriter
{
public:
    explicit SnapshotWriter(SnapshotShape shape)
        : m_shape(std::move(shape))
    {
    }

    std::string write()
    {
        m_bytes = std::string("\x80\x04", 2); // PROTO 4
        dict([&] {
            if (!m_shape.tracesFirst)
                writeSegments();
            text("device_traces");
            list(m_shape.devices.size(), 1000, [&](std::size_t device) { writeTrace(m_shape.devices[device]); });
            if (m_shape.tracesFirst)
                writeSegments();
            text("allocator_settings");
            dict([&] {
                text("PYTORCH_CUDA_ALLOC_CONF");
                text("expandable_segments:True");
            });
            if (m_shape.changeFirstEntry) {
                get(m_firstEntry);
                text("note");
                integer(1);
                opcode('s');
                opcode('0'); // SETITEM, POP
            }
        });
        return m_bytes + '.';
    }
    std::size_t injectedAt() const { return m_injectedAt; }

private:
    // One opcode; with `framed`, a FRAME before every fifth, as the framing of protocol 4 may
    // fall between any two.
    void opcode(char op)
    {
        if (m_shape.framed && ++m_opcodes % 5 == 0)
            m_bytes += std::string("\x95\0\0\1\0\0\0\0\0", 9);
        m_bytes += op;
    }
    int memoize()
    {
        opcode('\x94');
        return m_memo++;
    }
    void get(int index)
    {
        opcode('j');
        for (int i = 0; i < 4; ++i)
            m_bytes += static_cast<char>((static_cast<unsigned>(index) >> (8 * i)) & 0xFF);
    }
    // A string is written once, then referred to.
    void text(const std::string &value)
    {
        if (auto it = m_strings.find(value); it != m_strings.end())
            return get(it->second);
        opcode('\x8c');
        m_bytes += static_cast<char>(value.size());
        m_bytes += value;
        m_strings[value] = memoize();
    }
    void integer(std::int64_t value)
    {
        if (value >= 0 && value < 256) {
            opcode('K');
            m_bytes += static_cast<char>(value);
            return;
        }
        opcode('\x8a'); // LONG1 of 8 bytes
        m_bytes += '\x08';
        for (int i = 0; i < 8; ++i)
            m_bytes += static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xFF);
    }
    // `items` pushes key, value, key, value...
    template<typename Items>
    void dict(Items items)
    {
        opcode('}');
        memoize();
        opcode('(');
        items();
        opcode('u');
    }
    // Python's batches: APPENDS after a MARK, or a lone item by APPEND.
    template<typename Item>
    void list(std::size_t count, std::size_t batch, Item item)
    {
        opcode(']');
        memoize();
        for (std::size_t first = 0; first < count; first += batch) {
            const std::size_t size = std::min(batch, count - first);
            if (size > 1)
                opcode('(');
            for (std::size_t i = first; i < first + size; ++i)
                item(i);
            opcode(size > 1 ? 'e' : 'a');
        }
    }

    // Thirteen call stacks, written where first used and shared afterwards.
    void frames(int stack)
    {
        if (auto it = m_frameLists.find(stack); it != m_frameLists.end())
            return get(it->second);
        opcode(']');
        m_frameLists[stack] = memoize();
        opcode('(');
        for (int depth = 0; depth < 3 + stack % 4; ++depth) {
            const int frame = (stack * 3 + depth) % 17;
            if (auto it = m_frames.find(frame); it != m_frames.end()) {
                get(it->second);
                continue;
            }
            opcode('}');
            m_frames[frame] = memoize();
            opcode('(');
            text("filename");
            text(frame % 5 ? "model.py" : "torch/nn/modules/module.py");
            text("line");
            integer(10 + frame);
            text("name");
            text(frame == 0 ? "c10::cuda::CUDACachingAllocator::malloc(int)" : "forward_" + std::to_string(frame));
            opcode('u');
        }
        if (m_shape.framesHoldThemselves && stack == 5)
            get(m_frameLists[stack]);
        opcode('e');
    }

    void writeTrace(int entries)
    {
        list(std::size_t(entries), std::size_t(m_shape.batch), [&](std::size_t i) {
            if (m_shape.repeatFirstEntry && m_firstEntry >= 0 && i + 1 == std::size_t(entries))
                return get(m_firstEntry);
            if (i == 2500 && !m_shape.inject.empty()) {
                m_injectedAt = m_bytes.size();
                m_bytes += m_shape.inject;
            }
            // alloc, free_requested, free_completed of the block before; every fifth a free of a
            // block from before the trace, every seventh a segment.
            const char *action = i % 7 == 6   ? "segment_alloc"
                                 : i % 5 == 4 ? "free_completed"
                                 : i % 3 == 0 ? "alloc"
                                 : i % 3 == 1 ? "free_requested"
                                              : "free_completed";
            const std::uint64_t addr = 0x7f0000000000 + (i % 5 == 4 ? 0x100000000 + i : (i - i % 3)) * 512;
            opcode('}');
            const int entry = memoize();
            if (m_firstEntry < 0)
                m_firstEntry = entry;
            opcode('(');
            text("action");
            text(action);
            text("addr");
            integer(std::int64_t(addr));
            text("size");
            integer(std::int64_t(512 * (1 + i % 11)));
            text("stream");
            integer(0);
            text("time_us");
            integer(std::int64_t(1'700'000'000'000'000 + i * 10));
            text("frames");
            frames(int(i % 13));
            opcode('u');
        });
    }

    void writeSegments()
    {
        text("segments");
        list(std::size_t(m_shape.segments), 1000, [&](std::size_t s) {
            dict([&] {
                text("device");
                integer(0);
                text("address");
                integer(std::int64_t(0x7e0000000000 + s * 0x100000));
                text("total_size");
                integer(0x100000);
                text("stream");
                integer(0);
                text("segment_pool_id");
                integer(0);
                integer(0);
                opcode('\x86'); // TUPLE2
                memoize();
                text("frames");
                frames(int(s % 13));
                text("blocks");
                list(std::size_t(m_shape.blocksPerSegment), 1000, [&](std::size_t b) {
                    dict([&] {
                        text("address");
                        integer(std::int64_t(0x7e0000000000 + s * 0x100000 + b * 0x1000));
                        text("size");
                        integer(0x1000);
                        text("state");
                        text(b % 3 ? "active_allocated" : "inactive");
                        text("frames");
                        frames(int((s + b) % 13));
                    });
                });
            });
        });
    }

    SnapshotShape m_shape;
    std::string m_bytes;
    int m_memo = 0;
    int m_opcodes = 0;
    int m_firstEntry = -1;
    std::size_t m_injectedAt = 0;
    std::map<std::string, int> m_strings;
    std::map<int, int> m_frameLists;
    std::map<int, int> m_frames;
};

pickle::Document documentOf(std::string_view bytes)
{
    pickle::Document document;
    document.bytes = FileBytes::copyOf(bytes, 0);
    return document;
}

// The trace reading the whole document first gives.
std::shared_ptr<const Trace> readWhole(std::string_view bytes, const std::string &path)
{
    pickle::Document document = documentOf(bytes);
    pickle::unpickle(document, path);
    return importTorchSnapshot(document, path);
}

// Events with their stacks as frame names, for traces whose stacks were numbered in
// another order.
QStringList printedEvents(const Trace &trace)
{
    QStringList printed;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        QStringList frames;
        for (const std::uint32_t frame : trace.stacks.framesOf(trace.events.stack(i)))
            frames << qs(trace.stacks.frames()[frame].function);
        printed << QStringLiteral("%1 %2 %3 %4")
                       .arg(trace.events.timeNs(i))
                       .arg(trace.events.deltaBytes(i))
                       .arg(trace.events.addr(i))
                       .arg(frames.join(QLatin1Char('<')));
    }
    return printed;
}

QString fixturePath(const QString &name)
{
    return QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/") + name;
}

// The message of the ImportError reading `bytes` in one pass (falling back as it must) throws.
QString streamingError(const std::string &bytes, const std::string &path)
{
    try {
        streamTorchSnapshot(FileBytes::copyOf(bytes, 0), path);
    } catch (const ImportError &error) {
        return qs(error.what());
    }
    return QString();
}

} // namespace

Q_DECLARE_METATYPE(SnapshotShape)

class tst_SnapshotStream : public QObject
{
    Q_OBJECT

private slots:
    void fixturesReadInOnePassAsWhole_data()
    {
        QTest::addColumn<QString>("file");
        const QDir data(fixturePath(QString()));
        const QStringList filters{QStringLiteral("snapshot_*.pickle*")};
        for (const QString &name : data.entryList(filters, QDir::Files))
            QTest::newRow(qPrintable(name)) << name;
        for (const QString &name : QDir(data.filePath(QStringLiteral("real"))).entryList(filters, QDir::Files))
            QTest::newRow(qPrintable(name)) << QStringLiteral("real/") + name;
    }
    void fixturesReadInOnePassAsWhole()
    {
        QFETCH(QString, file);
        const std::string path = ss(fixturePath(file));
        const FileBytes bytes = readFileBytes(path, 0);
        const auto whole = readWhole(bytes.view(), path);
        pickle::Document document = documentOf(bytes.view());
        const auto streamed = readTorchSnapshotInOnePass(document, path);
        QVERIFY2(streamed, "the fixture was not read in one pass");
        QCOMPARE(streamed->events, whole->events);
        QVERIFY(streamed->stacks == whole->stacks);
        QVERIFY(*streamed == *whole);
        QVERIFY(*loadTrace(path) == *whole);
    }

    // Layouts Python writes and ones it does not: each reads as the whole document does,
    // in one pass where the pass can follow it, by reading the whole document where not.
    void writtenSnapshotsReadAsWhole_data()
    {
        QTest::addColumn<SnapshotShape>("shape");
        QTest::addColumn<bool>("onePass");
        QTest::addRow("one device, five batches") << SnapshotShape{} << true;
        QTest::addRow("three devices, one of them empty") << SnapshotShape{{2500, 0, 1200}} << true;
        QTest::addRow("lone entries added by APPEND") << SnapshotShape{{1, 1, 1001}} << true;
        QTest::addRow("batches of seven") << SnapshotShape{{300}, 7} << true;
        QTest::addRow("segments with blocks") << SnapshotShape{{1500}, 1000, 1200, 3} << true;
        QTest::addRow("300 devices") << SnapshotShape{std::vector<int>(300, 3)} << true;
        QTest::addRow("a frame list holding itself") << SnapshotShape{{200}, 1000, 0, 0, false, false, true} << true;
        QTest::addRow("a trace entry listed twice") << SnapshotShape{{2500}, 1000, 0, 0, false, true} << false;
        QTest::addRow("an entry changed after it was read")
            << SnapshotShape{{2500}, 1000, 0, 0, false, false, false, true} << false;
        SnapshotShape framed{{2500, 700}, 1000, 300, 3};
        framed.framed = true;
        QTest::addRow("FRAME opcodes between any two others") << framed << true;
    }
    void writtenSnapshotsReadAsWhole()
    {
        QFETCH(SnapshotShape, shape);
        QFETCH(bool, onePass);
        const std::string bytes = SnapshotWriter(shape).write();
        const auto whole = readWhole(bytes, "written.pickle");
        QVERIFY(!whole->events.empty());
        pickle::Document document = documentOf(bytes);
        QCOMPARE(bool(readTorchSnapshotInOnePass(document, "written.pickle")), onePass);
        const auto streamed = streamTorchSnapshot(FileBytes::copyOf(bytes, 0), "written.pickle");
        QCOMPARE(streamed->events, whole->events);
        QVERIFY(*streamed == *whole);
    }

    // Nesting and cycles need no recursion, and end as reading the whole document ends:
    // in the same sentence, or in the same trace.
    void nestedAndCyclicPickles_data()
    {
        QTest::addColumn<QByteArray>("pickle");
        const QByteArray root = QByteArray("\x80\x04}\x94\x8c\x0d"
                                           "device_traces\x94]\x94",
                                           22); // {"device_traces": [
        QTest::addRow("a device trace of 100,000 nested lists")
            << root + QByteArray(100000, ']') + QByteArray(100000, 'a') + "s.";
        // memo 3: the trace; GET 3, APPEND: it holds itself.
        QTest::addRow("a device trace holding itself") << root
                                                              + "]\x94h\x03"
                                                                "aas.";
        // memo 3: the entry; its "frames" is the entry itself.
        QTest::addRow("an entry whose frames are itself") << root
                                                                 + "]}\x94(\x8c\x06"
                                                                   "action\x8c\x05"
                                                                   "alloc\x8c\x04"
                                                                   "addr\x4b\x10\x8c\x06"
                                                                   "frames\x68\x03uaas.";
        QTest::addRow("a million MARKs") << root + QByteArray(1000000, '(') + "as.";
    }
    void nestedAndCyclicPickles()
    {
        QFETCH(QByteArray, pickle);
        const std::string bytes = pickle.toStdString();
        QString wholeProblem, streamedProblem;
        std::shared_ptr<const Trace> whole, streamed;
        try {
            whole = readWhole(bytes, "nested.pickle");
        } catch (const ImportError &error) {
            wholeProblem = qs(error.what());
        }
        try {
            streamed = streamTorchSnapshot(FileBytes::copyOf(bytes, 0), "nested.pickle");
        } catch (const ImportError &error) {
            streamedProblem = qs(error.what());
        }
        QCOMPARE(streamedProblem, wholeProblem);
        QCOMPARE(bool(streamed), bool(whole));
        if (whole)
            QVERIFY(*streamed == *whole);
    }

    // Keys in sorted order put the traces before the segments: still one pass, the same
    // events on the same stacks, though the stacks are numbered in the order met.
    void tracesBeforeSegments()
    {
        SnapshotShape shape{{1500}, 1000, 40, 3};
        shape.tracesFirst = true;
        const std::string bytes = SnapshotWriter(shape).write();
        const auto whole = readWhole(bytes, "sorted.pickle");
        pickle::Document document = documentOf(bytes);
        const auto streamed = readTorchSnapshotInOnePass(document, "sorted.pickle");
        QVERIFY(streamed);
        QCOMPARE(printedEvents(*streamed), printedEvents(*whole));
        QCOMPARE(streamed->reserved, whole->reserved);
        QCOMPARE(streamed->stacks.stackCount(), whole->stacks.stackCount());
    }

    // What was made for a batch goes once read: the document keeps a handful of containers
    // where reading it whole keeps every entry, frame list and frame.
    void readBatchesAreReleased()
    {
        const std::string bytes = SnapshotWriter(SnapshotShape{{20000}}).write();
        pickle::Document whole = documentOf(bytes);
        pickle::unpickle(whole, "written.pickle");
        QVERIFY(whole.containerCount() > 20000);

        const std::string path = "written.pickle";
        const Progress progress;
        pickle::SnapshotAssembler assembler(path, progress);
        pickle::SnapshotStream stream(assembler, path);
        pickle::Document streamed = documentOf(bytes);
        pickle::unpickle(streamed, path, progress, &stream);
        QVERIFY2(streamed.containerCount() < 50, qPrintable(QString::number(streamed.containerCount())));
        QCOMPARE(stream.parts().deviceLists.size(), std::size_t(1));
        QCOMPARE(stream.parts().deviceLists.begin()->second.entries, std::size_t(20000));
    }

    void badPicklesGiveOneSentence_data()
    {
        QTest::addColumn<QByteArray>("damage"); // written in the third batch of a trace
        QTest::addColumn<QString>("problem");
        QTest::addRow("memo entry never stored")
            << QByteArray("j\x00\x00\x01\x00", 5) << QStringLiteral("refers to memo entry 65536, which was never stored");
        QTest::addRow("GLOBAL") << QByteArray("cos\nsystem\n") << QStringLiteral("asks to run Python code (GLOBAL)");
        QTest::addRow("REDUCE") << QByteArray("R") << QStringLiteral("asks to run Python code (REDUCE)");
        QTest::addRow("BUILD") << QByteArray("b") << QStringLiteral("asks to run Python code (BUILD)");
        QTest::addRow("an opcode plain data never needs") << QByteArray("\xff") << QStringLiteral("opcode 0xff");
        QTest::addRow("memo entry far out of sequence")
            << QByteArray("r\xff\xff\xff\x7f", 5) << QStringLiteral("far out of sequence");
        QTest::addRow("string longer than the file") << QByteArray("X\xff\xff\xff\x0f", 5) << QStringLiteral("is truncated");
    }
    void badPicklesGiveOneSentence()
    {
        QFETCH(QByteArray, damage);
        QFETCH(QString, problem);
        SnapshotShape shape;
        shape.inject = damage.toStdString();
        SnapshotWriter writer(shape);
        const std::string bytes = writer.write();
        const QString message = streamingError(bytes, "bad.pickle");
        QVERIFY2(message.startsWith(QStringLiteral("bad.pickle: ")), qPrintable(message));
        QVERIFY2(message.contains(problem), qPrintable(message));
        QVERIFY2(message.endsWith(QStringLiteral("(at byte %1)").arg(writer.injectedAt())), qPrintable(message));
        // Reading the whole document says the same.
        try {
            readWhole(bytes, "bad.pickle");
            QFAIL("the whole document was accepted");
        } catch (const ImportError &error) {
            QCOMPARE(qs(error.what()), message);
        }
    }

    // A real snapshot cut anywhere: a sentence saying so, at the byte where it ends.
    void truncatedAnywhere()
    {
        const std::string path = ss(fixturePath(QStringLiteral("real/snapshot_cs336_forward_fp32.pickle.gz")));
        const FileBytes bytes = readFileBytes(path, 0);
        QVERIFY(bytes.size() > 100000);
        int cuts = 0;
        for (std::size_t cut = 997; cut < bytes.size(); cut += 997, ++cuts) {
            const QString message = streamingError(std::string(bytes.view().substr(0, cut)), "cut.pickle");
            if (!message.startsWith(QStringLiteral("cut.pickle: is truncated")) || !message.contains(QStringLiteral("(at byte ")))
                QFAIL(qPrintable(QStringLiteral("cut at %1: %2").arg(cut).arg(message)));
        }
        QVERIFY(cuts > 400);
    }

    void progressAndCancel()
    {
        const std::string bytes = SnapshotWriter(SnapshotShape{{150000}}).write();
        std::vector<double> reported;
        Progress progress;
        progress.report = [&](double fraction) { reported.push_back(fraction); };
        QCOMPARE(streamTorchSnapshot(FileBytes::copyOf(bytes, 0), "big.pickle", progress)->events.size(),
                 readWhole(bytes, "big.pickle")->events.size());
        QVERIFY(reported.size() >= 2);
        QVERIFY(std::is_sorted(reported.begin(), reported.end()));
        QVERIFY(reported.front() > 0.0 && reported.back() <= 1.0);

        std::atomic<bool> cancel{false};
        progress.cancel = &cancel;
        progress.report = [&](double) { cancel = true; };
        QVERIFY_THROWS_EXCEPTION(Cancelled, streamTorchSnapshot(FileBytes::copyOf(bytes, 0), "big.pickle", progress));
    }
};

QTEST_GUILESS_MAIN(tst_SnapshotStream)
#include "tst_snapshotstream.moc"
