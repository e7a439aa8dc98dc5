// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/flamegraph.h"
#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;
using peaklens::test::traceFrom;

namespace {

// Stacks outermost first: the C runtime and CPython start every one, the caching
// allocator ends most.
const QString kMain = QStringLiteral("_start@??:0;_PyEval_EvalFrameDefault@??:0;main@train.py:10");
const QString kMalloc = QStringLiteral(";c10::cuda::CUDACachingAllocator::malloc@CUDACachingAllocator.cpp:0");

// A trace whose peak holds, by stack:
//   main 950 = forward 900 (self 100, mlp 500, attn 300) + step 50; 11 B of blocks whose
//   stacks hold only machinery; 7 B without a stack. 1000 B under attn are freed before it.
QString handBuiltTrace()
{
    const QString forward = kMain + QStringLiteral(";forward@model.py:40");
    return QStringLiteral("layer model.blocks.0.attn\nlayer model.blocks.0.mlp\nlayer model.head\n")
           + QStringLiteral("t=1 alloc gone 1000 @fwd:model.blocks.0.attn stack=") + forward + QStringLiteral(";attn@model.py:20")
           + kMalloc + QStringLiteral("\nt=2 free gone @fwd:model.blocks.0.attn stack=") + forward
           + QStringLiteral(";attn@model.py:20\n") + QStringLiteral("t=3 alloc a 300 @fwd:model.blocks.0.attn stack=") + forward
           + QStringLiteral(";attn@model.py:20") + kMalloc + QStringLiteral("\nt=4 alloc m 500 @fwd:model.blocks.0.mlp stack=")
           + forward + QStringLiteral(";mlp@model.py:30") + QStringLiteral("\nt=5 alloc f 100 @fwd:model stack=") + forward
           + kMalloc + QStringLiteral("\nt=6 alloc s 50 @fwd:model.head stack=") + kMain + QStringLiteral(";step@optim.py:5")
           + QStringLiteral("\nt=7 alloc h 11 stack=_PyEval_EvalFrameDefault@??:0") + kMalloc
           + QStringLiteral("\nt=8 alloc n 7\nt=9 free n\n");
}

// One node a line, indented by depth: "label bytes (self) blocks".
QString printGraph(const FlameGraph &graph)
{
    QStringList lines;
    for (const FlameNode &node : graph.nodes)
        lines << QString(static_cast<qsizetype>(node.depth), QLatin1Char(' '))
                     + QStringLiteral("%1 %2 (%3) %4").arg(qs(node.label)).arg(node.bytes).arg(node.selfBytes).arg(node.blocks);
    return lines.join(QLatin1Char('\n'));
}

// What every graph must hold: preorder with subtree ends, sums that add up, children
// largest first.
QString structureProblem(const FlameGraph &graph)
{
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        const FlameNode &node = graph.nodes[i];
        if (node.end <= i || node.end > graph.nodes.size())
            return QStringLiteral("node %1 ends at %2").arg(i).arg(node.end);
        std::int64_t bytes = node.selfBytes, previous = INT64_MAX;
        for (const std::uint32_t child : graph.children(i)) {
            const FlameNode &c = graph.nodes[child];
            if (c.parent != i || c.depth != node.depth + 1 || c.end > node.end)
                return QStringLiteral("node %1 is misplaced under %2").arg(child).arg(i);
            if (c.bytes > previous)
                return QStringLiteral("the children of %1 are not largest first").arg(i);
            previous = c.bytes;
            bytes += c.bytes;
        }
        if (bytes != node.bytes)
            return QStringLiteral("node %1 (%2) holds %3 B, its own and its children's add up to %4")
                .arg(i)
                .arg(qs(node.label))
                .arg(node.bytes)
                .arg(bytes);
    }
    return {};
}

std::uint32_t findNode(const FlameGraph &graph, const QString &label)
{
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        if (qs(graph.nodes[i].label) == label)
            return i;
    }
    return FlameNode::kNone;
}

// "a m": the events (by block name: their address order) a selection holds.
QString selectedEvents(const Trace &trace, const FlameSelection &selection)
{
    QStringList sizes;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        if (selection.containsEvent(trace, i))
            sizes << QString::number(trace.events.deltaBytes(i));
    }
    return sizes.join(QLatin1Char(' '));
}

} // namespace

class tst_FlameGraph : public QObject
{
    Q_OBJECT

private slots:
    void graphOfTheLiveSet_data()
    {
        QTest::addColumn<int>("keying");
        QTest::addColumn<bool>("machinery");
        QTest::addColumn<QString>("graph");
        QTest::addRow("by stack, machinery collapsed") << int(FlameKeying::Stack) << false
                                                       << QStringLiteral("all live memory 968 (0) 6\n"
                                                                         " main (train.py:10) 950 (0) 4\n"
                                                                         "  forward (model.py:40) 900 (100) 3\n"
                                                                         "   mlp (model.py:30) 500 (500) 1\n"
                                                                         "   attn (model.py:20) 300 (300) 1\n"
                                                                         "  step (optim.py:5) 50 (50) 1\n"
                                                                         " (allocator and runtime frames only) 11 (11) 1\n"
                                                                         " (no stack) 7 (7) 1");
        QTest::addRow("by stack, machinery shown")
            << int(FlameKeying::Stack) << true
            << QStringLiteral("all live memory 968 (0) 6\n"
                              " _start 950 (0) 4\n"
                              "  _PyEval_EvalFrameDefault 950 (0) 4\n"
                              "   main (train.py:10) 950 (0) 4\n"
                              "    forward (model.py:40) 900 (0) 3\n"
                              "     mlp (model.py:30) 500 (500) 1\n"
                              "     attn (model.py:20) 300 (0) 1\n"
                              "      c10::cuda::CUDACachingAllocator::malloc (CUDACachingAllocator.cpp) 300 (300) 1\n"
                              "     c10::cuda::CUDACachingAllocator::malloc (CUDACachingAllocator.cpp) 100 (100) 1\n"
                              "    step (optim.py:5) 50 (50) 1\n"
                              " _PyEval_EvalFrameDefault 11 (0) 1\n"
                              "  c10::cuda::CUDACachingAllocator::malloc (CUDACachingAllocator.cpp) 11 (11) 1\n"
                              " (no stack) 7 (7) 1");
        QTest::addRow("by module") << int(FlameKeying::Module) << false
                                   << QStringLiteral("all live memory 968 (0) 6\n"
                                                     " model 950 (100) 4\n"
                                                     "  blocks 800 (0) 2\n"
                                                     "   0 800 (0) 2\n"
                                                     "    mlp 500 (500) 1\n"
                                                     "    attn 300 (300) 1\n"
                                                     "  head 50 (50) 1\n"
                                                     " (no layer) 18 (18) 2");
    }

    void graphOfTheLiveSet()
    {
        QFETCH(int, keying);
        QFETCH(bool, machinery);
        QFETCH(QString, graph);
        const auto trace = traceFrom(handBuiltTrace());
        // At t=8 the 7 B block without a stack is live; it is freed at t=9.
        const LiveSet live = liveSetAt(*trace, Device{}, 8);
        QCOMPARE(live.bytes, qint64(968));
        const FlameGraph built = buildFlameGraph(*trace, live, FlameGraphOptions{FlameKeying(keying), machinery});
        QCOMPARE(printGraph(built), graph);
        QCOMPARE(built.nodes.front().bytes, live.bytes);
        QCOMPARE(built.nodes.front().blocks, qint64(live.allocations.size()));
        QCOMPARE(built.timeNs, qint64(8));
        QVERIFY2(structureProblem(built).isEmpty(), qPrintable(structureProblem(built)));
        // The same moment, asked for by time.
        QCOMPARE(printGraph(buildFlameGraphAt(*trace, Device{}, 8, built.options)), graph);
    }

    void nothingLive()
    {
        const auto trace = traceFrom(QStringLiteral("alloc a 10\nfree a\n"));
        const FlameGraph graph = buildFlameGraphAt(*trace, Device{}, 5);
        QCOMPARE(printGraph(graph), QStringLiteral("all live memory 0 (0) 0"));
        QCOMPARE(graph.children(0), std::vector<std::uint32_t>{});
    }

    // The blocks under a clicked node, live or not: their stack or layer lies under it.
    void selectionHoldsTheEventsUnderANode_data()
    {
        QTest::addColumn<int>("keying");
        QTest::addColumn<bool>("machinery");
        QTest::addColumn<QString>("node");
        QTest::addColumn<QString>("events"); // the sizes of the events selected, in time order
        QTest::addRow("a frame: its freed blocks too")
            << int(FlameKeying::Stack) << false << QStringLiteral("attn (model.py:20)") << QStringLiteral("1000 -1000 300");
        QTest::addRow("a frame with callees and its own blocks")
            << int(FlameKeying::Stack) << false << QStringLiteral("forward (model.py:40)")
            << QStringLiteral("1000 -1000 300 500 100");
        QTest::addRow("an allocator frame, machinery shown: only where it is")
            << int(FlameKeying::Stack) << true
            << QStringLiteral("c10::cuda::CUDACachingAllocator::malloc (CUDACachingAllocator.cpp)") << QStringLiteral("1000 300");
        QTest::addRow("stacks of machinery only")
            << int(FlameKeying::Stack) << false << QStringLiteral("(allocator and runtime frames only)") << QStringLiteral("11");
        QTest::addRow("no stack") << int(FlameKeying::Stack) << false << QStringLiteral("(no stack)") << QStringLiteral("7 -7");
        QTest::addRow("the root") << int(FlameKeying::Stack) << false << QStringLiteral("all live memory")
                                  << QStringLiteral("1000 -1000 300 500 100 50 11 7 -7");
        QTest::addRow("a module and its children")
            << int(FlameKeying::Module) << false << QStringLiteral("0") << QStringLiteral("1000 -1000 300 500");
        QTest::addRow("no layer") << int(FlameKeying::Module) << false << QStringLiteral("(no layer)")
                                  << QStringLiteral("11 7 -7");
    }

    void selectionHoldsTheEventsUnderANode()
    {
        QFETCH(int, keying);
        QFETCH(bool, machinery);
        QFETCH(QString, node);
        QFETCH(QString, events);
        const auto trace = traceFrom(handBuiltTrace());
        const FlameGraph graph = buildFlameGraphAt(*trace, Device{}, 8, FlameGraphOptions{FlameKeying(keying), machinery});
        const std::uint32_t index = findNode(graph, node);
        QVERIFY(index != FlameNode::kNone);
        QCOMPARE(selectedEvents(*trace, selectUnder(*trace, graph, index)), events);
    }

    void searchCountsNestedMatchesOnce_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("nodes");
        QTest::addColumn<qint64>("bytes");
        QTest::addRow("a file, nested") << QStringLiteral("model.py") << QStringLiteral("forward mlp attn") << qint64(900);
        QTest::addRow("any case") << QStringLiteral("ATTN") << QStringLiteral("attn") << qint64(300);
        QTest::addRow("apart") << QStringLiteral("t") << QStringLiteral("main attn step (allocator (no") << qint64(968);
        QTest::addRow("side by side") << QStringLiteral("p (") << QStringLiteral("mlp step") << qint64(550);
        QTest::addRow("nothing") << QStringLiteral("backward") << QString() << qint64(0);
        QTest::addRow("empty text") << QString() << QString() << qint64(0);
    }

    void searchCountsNestedMatchesOnce()
    {
        QFETCH(QString, text);
        QFETCH(QString, nodes);
        QFETCH(qint64, bytes);
        const auto trace = traceFrom(handBuiltTrace());
        const FlameGraph graph = buildFlameGraphAt(*trace, Device{}, 8);
        const FlameSearch found = searchFlameGraph(graph, ss(text));
        QStringList names;
        for (const std::uint32_t node : found.nodes)
            names << qs(graph.nodes[node].label).section(QLatin1Char(' '), 0, 0);
        QCOMPARE(names.join(QLatin1Char(' ')), nodes);
        QCOMPARE(found.bytes, bytes);
    }

    // Real traces at their peak: the root holds the live set, the sums add up, and the
    // events each node selects hold exactly its live bytes.
    void realTracesAtTheirPeak_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("keying");
        QTest::addColumn<bool>("machinery");
        QTest::addColumn<QString>("top"); // the root's children, largest first
        const QString train = QStringLiteral("snapshot_cs336_medium_train.pickle.gz");
        const QString qwen = QStringLiteral("kineto_h100_qwen_inference.pt.trace.json.gz");
        const QString before = QString::fromUtf8(kBeforeTrace.data(), kBeforeTrace.size());
        QTest::addRow("snapshot by stack") << train << int(FlameKeying::Stack) << false
                                           << before
                                                  + QStringLiteral(
                                                      " | torch::autograd::Engine::thread_init | <module> (nsys_profile.py:249)");
        QTest::addRow("snapshot by stack, machinery shown")
            << train << int(FlameKeying::Stack) << true << before + QStringLiteral(" | __clone | _start");
        QTest::addRow("snapshot by module") << train << int(FlameKeying::Module) << false
                                            << QStringLiteral("(no layer) | nsys_profile:142");
        QTest::addRow("Kineto trace by stack")
            << qwen << int(FlameKeying::Stack) << false << QStringLiteral("spawn_main (spawn.py:122) | ") + before;
        QTest::addRow("Kineto trace by module")
            << qwen << int(FlameKeying::Module) << false << QStringLiteral("Qwen2Model_0 | (no layer)");
    }

    void realTracesAtTheirPeak()
    {
        QFETCH(QString, file);
        QFETCH(int, keying);
        QFETCH(bool, machinery);
        QFETCH(QString, top);
        const auto trace = loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/real/" + ss(file));
        const PeakReport report = findPeaks(*trace);
        QVERIFY(report.liveAtPeak);
        const LiveSet &live = *report.liveAtPeak;
        const FlameGraph graph = buildFlameGraph(*trace, live, FlameGraphOptions{FlameKeying(keying), machinery});
        QCOMPARE(graph.nodes.front().bytes, live.bytes);
        QCOMPARE(graph.nodes.front().bytes, report.devices[*report.primary].allocatedBytes);
        QCOMPARE(graph.nodes.front().blocks, qint64(live.allocations.size()));
        QVERIFY2(structureProblem(graph).isEmpty(), qPrintable(structureProblem(graph)));
        QStringList children;
        for (const std::uint32_t child : graph.children(0))
            children << qs(graph.nodes[child].label).section(QLatin1Char('('), 0, 0, QString::SectionSkipEmpty).trimmed();
        QStringList want;
        for (const QString &label : top.split(QStringLiteral(" | ")))
            want << label.section(QLatin1Char('('), 0, 0, QString::SectionSkipEmpty).trimmed();
        QCOMPARE(children, want);
        for (const FlameNode &node : graph.nodes) {
            if (node.label == kBeforeTrace)
                QCOMPARE(int(node.type), int(FlameNodeType::Synthetic));
        }
        // The two ways of placing a block agree: through the graph, and through the
        // selection of the nodes near the top.
        for (std::uint32_t node = 0; node < graph.nodes.size(); ++node) {
            if (graph.nodes[node].depth > 3)
                continue;
            const FlameSelection selection = selectUnder(*trace, graph, node);
            std::int64_t bytes = 0;
            for (const std::size_t i : live.allocations)
                bytes += selection.containsEvent(*trace, i) ? trace->events.deltaBytes(i) : 0;
            QVERIFY2(bytes == graph.nodes[node].bytes, graph.nodes[node].label.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(tst_FlameGraph)
#include "tst_flamegraph.moc"
