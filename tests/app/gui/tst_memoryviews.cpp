// SPDX-License-Identifier: GPL-3.0-or-later
// The window's memory views on real traces: the block under the cursor and the pinned
// block, the flame graph and its filter, kernel lanes, the allocator's segments, a trace
// compared with another, and several ranks at once.

#include "testsupport.h"

#include "mainwindow.h"
#include "models/diffmodel.h"
#include "models/ranksmodel.h"
#include "widgets/allocatorpane.h"
#include "widgets/blockpane.h"
#include "widgets/diffpane.h"
#include "widgets/flamegraphpane.h"
#include "widgets/flamegraphview.h"
#include "widgets/rankspane.h"
#include "widgets/timelineview.h"

#include "core/trace/units.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>

#include <algorithm>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
const QString kKineto = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_h100_qwen_inference.pt.trace.json.gz");
const QString kSegments = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_segments_toy.pickle.gz");
const QString kSnapshot = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz");

bool open(MainWindow &window, const QStringList &paths)
{
    QSignalSpy loaded(&window, &MainWindow::documentLoaded);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openFiles(paths);
    return QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 60000) && loaded.count() == 1;
}

std::int64_t peakTime(const TraceDocument &document)
{
    return document.summary.peak.devices[*document.summary.peak.primary].timeNs;
}

// A rank of a run as trace text: parameters, then an activation of `activation` bytes.
QString writeRank(const QTemporaryDir &directory, int rank, const char *activation)
{
    const QString path = directory.filePath(QStringLiteral("rank%1.pltxt").arg(rank));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(QStringLiteral("meta rank %1\nmeta world_size 3\n"
                              "t=0 alloc 0x10 100MiB parameter @other:net.fc\n"
                              "t=1ms alloc 0x20 %2 activation @fwd:net.fc\n"
                              "t=2ms free 0x20 @bwd:net.fc\n")
                   .arg(rank)
                   .arg(QString::fromLatin1(activation))
                   .toUtf8());
    return path;
}

} // namespace

class tst_MemoryViews : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // At the peak, the bottom of the stack is the oldest block of the first band; a click
    // there pins it, and the Block pane names its size and stack.
    void aClickPinsTheBlockUnderTheCursor()
    {
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(open(window, {kSnapshot}));
        const TraceDocument &document = *window.document();
        const std::int64_t t = peakTime(document);
        const auto block = window.timeline()->blockAt(t, 0);
        QVERIFY(block);
        const std::size_t event = document.blocks->allocation(*block);
        QVERIFY(document.trace->events.timeNs(event) <= t);
        QVERIFY(document.blocks->endNs(*block) > t);
        QVERIFY(!window.timeline()->blockAt(t, document.peakBytes + 1)); // above the stack
        window.pickTime(t, 0);
        QCOMPARE(window.blockPane()->block(), block);
        QVERIFY2(
            window.blockPane()->text().contains(QString::fromStdString(formatBytes(document.trace->events.deltaBytes(event)))),
            qPrintable(window.blockPane()->text()));

        // The same with the mouse: a click just above the axis.
        QSignalSpy clicked(window.timeline(), &TimelineView::blockClicked);
        const QCPAxisRect *rect = window.timeline()->axisRect();
        QTest::mouseClick(window.timeline(), Qt::LeftButton, {}, QPoint(rect->center().x(), rect->bottom() - 2));
        QCOMPARE(clicked.count(), 1);
        const auto pinned = clicked.front().front().value<std::optional<std::size_t>>();
        QVERIFY(pinned);
        QCOMPARE(window.blockPane()->block(), pinned);
    }

    // The flame graph at the peak holds exactly the live set; a search finds frames; a
    // selected node draws its blocks' memory on the timeline.
    void flameGraphHoldsTheLiveSet()
    {
        MainWindow window;
        QVERIFY(open(window, {kSnapshot}));
        const TraceDocument &document = *window.document();
        FlameGraphPane *pane = window.flameGraphPane();
        const FlameGraph *graph = pane->view()->graph();
        QVERIFY(graph);
        QCOMPARE(graph->nodes.front().bytes, document.summary.peak.liveAtPeak->bytes);
        pane->search(QStringLiteral("backward"));
        QVERIFY2(pane->searchSummary().contains(QLatin1String("match")), qPrintable(pane->searchSummary()));
        QVERIFY(!pane->searchSummary().contains(QLatin1String("no match")));
        QSignalSpy selected(pane, &FlameGraphPane::selectionChanged);
        QSignalSpy drawn(pane, &FlameGraphPane::selectionMemory);
        pane->selectNode(1);
        QCOMPARE(selected.count(), 1);
        QVERIFY(selected.front().at(1).toString().startsWith(QLatin1String("memory under")));
        // Its curve is drawn off the UI thread, then shown: over the whole trace, it reaches
        // at least what the node holds at the peak.
        QTRY_VERIFY_WITH_TIMEOUT(window.statusBar()->currentMessage().startsWith(QLatin1String("Drawn: the memory under")),
                                 30000);
        QCOMPARE(drawn.count(), 1);
        const auto curve = drawn.front().front().value<std::vector<SeriesPoint>>();
        const auto highest =
            std::max_element(curve.begin(), curve.end(), [](const auto &a, const auto &b) { return a.bytes < b.bytes; });
        QVERIFY(highest != curve.end());
        QVERIFY2(highest->bytes >= graph->nodes[1].bytes, qPrintable(QString::number(highest->bytes)));
        pane->selectNode(std::nullopt);
        QCOMPARE(drawn.count(), 2);
        QVERIFY(drawn.back().front().value<std::vector<SeriesPoint>>().empty());

        // At a clicked time, what is live then.
        const std::int64_t early = document.summary.firstNs;
        window.pickTime(early);
        QCOMPARE(pane->view()->graph()->nodes.front().bytes, std::int64_t(valueAt(document.byCategory.allocated, early)));
    }

    void kernelLanesShowWhereTheTraceHasKernels_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("lanes");
        QTest::newRow("a Kineto trace with kernels") << kKineto << true;
        QTest::newRow("a snapshot has none") << kSnapshot << false;
    }
    void kernelLanesShowWhereTheTraceHasKernels()
    {
        QFETCH(QString, path);
        QFETCH(bool, lanes);
        MainWindow window;
        QVERIFY(open(window, {path}));
        QCOMPARE(window.timeline()->showsKernelLanes(), lanes);
        QCOMPARE(!window.document()->kernels->empty(), lanes);
    }

    void allocatorPaneShowsTheSegments()
    {
        MainWindow window;
        QSignalSpy shown(window.allocatorPane(), &AllocatorPane::shown);
        QVERIFY(open(window, {kSegments}));
        QVERIFY(shown.wait(30000) || shown.count() > 0);
        // Figures computed from the file by hand: 9 segments, 3,781,165,056 bytes reserved.
        QVERIFY2(window.allocatorPane()->text().contains(QLatin1String("9 segments reserve 3.521 GiB")),
                 qPrintable(window.allocatorPane()->text()));
    }

    // A recording with a CUDA graph's pool and a MemPool: the segments at the peak per pool,
    // as the file's segments hold them (a 34 MiB segment for the graph, 4 MiB for the MemPool).
    void allocatorPaneSumsEachPool()
    {
        MainWindow window;
        QSignalSpy shown(window.allocatorPane(), &AllocatorPane::shown);
        QVERIFY(
            open(window, {QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_h200_pools_streams_graph.pickle.gz")}));
        QVERIFY(shown.wait(30000) || shown.count() > 0);
        const QString text = window.allocatorPane()->text();
        QVERIFY2(text.contains(QLatin1String("graph pool 1: 34.00 MiB reserved, 33.00 MiB allocated, 1.000 MiB free")),
                 qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("MemPool 1: 4.000 MiB reserved, 3.000 MiB allocated, 1.000 MiB free")),
                 qPrintable(text));
    }

    void comparingATraceWithItselfFindsNothing()
    {
        MainWindow window;
        QVERIFY(open(window, {kSample}));
        QSignalSpy shown(&window, &MainWindow::comparisonShown);
        window.compareWith(kSample);
        QVERIFY(shown.wait(60000));
        QVERIFY(window.diffPane()->headline().contains(QLatin1String("Nothing differs")));
        QCOMPARE(window.diffPane()->byLayer()->rowCount(), 0);
    }

    void comparingTwoTracesListsWhatChanged()
    {
        MainWindow window;
        QVERIFY(open(window, {kSample}));
        QSignalSpy shown(&window, &MainWindow::comparisonShown);
        window.compareWith(kSnapshot);
        QVERIFY(shown.wait(60000));
        QVERIFY(window.diffPane()->byLayer()->rowCount() > 0);
        QVERIFY(window.diffPane()->byCategory()->rowCount() > 0);
        QVERIFY(!window.diffPane()->headline().contains(QLatin1String("Nothing differs")));
    }

    // The last tab compares by a grouping the user picks, as diff --group does: a real run
    // in a CUDA graph's pool, a MemPool and side streams, against one in the default pool.
    void comparingByAGroupingListsNewAndGone()
    {
        MainWindow window;
        const QString pools = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_h200_pools_streams_graph.pickle.gz");
        const QString plain = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_h200_gpt_train.pickle.gz");
        QVERIFY(open(window, {pools}));
        QSignalSpy shown(&window, &MainWindow::comparisonShown);
        window.compareWith(plain);
        QVERIFY(shown.wait(60000));
        auto *grouping = window.diffPane()->findChild<QComboBox *>(QStringLiteral("diffGrouping"));
        grouping->setCurrentIndex(grouping->findData(QStringLiteral("pool")));
        const DiffModel *rows = window.diffPane()->byGroup();
        QStringList shownRows;
        for (int row = 0; row < rows->rowCount(); ++row)
            shownRows << rows->index(row, DiffModel::KeyColumn).data().toString() + QLatin1Char(' ')
                             + rows->index(row, DiffModel::ChangeColumn).data().toString();
        shownRows.sort();
        QCOMPARE(shownRows, QStringList({QStringLiteral("MemPool 1 gone from A"), QStringLiteral("default pool grew"),
                                         QStringLiteral("graph pool 1 gone from A")}));
    }

    // Three ranks, the third with twice the activations: the overview lists them in rank
    // order, flags the third, and a click on a row opens that rank.
    void severalRanksShowTheOverview()
    {
        QTemporaryDir directory;
        const QStringList paths{writeRank(directory, 2, "200MiB"), writeRank(directory, 0, "100MiB"),
                                writeRank(directory, 1, "101MiB")};
        MainWindow window;
        QVERIFY(open(window, paths));
        QCOMPARE(window.processes().size(), std::size_t(3));
        const CrossRankTable &table = window.ranksPane()->model()->table();
        QCOMPARE(table.rows.size(), std::size_t(3));
        QCOMPARE(table.rows[0].rank, std::int64_t(0));
        QVERIFY(!table.rows[0].outlier);
        QVERIFY(table.rows[2].outlier);
        QCOMPARE(table.rows[2].overview.figures.peakBytes, std::int64_t(300) << 20);
        QCOMPARE(window.document()->filePath(), paths[1]); // rank 0 shown
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        Q_EMIT window.ranksPane()->rankChosen(2);
        QVERIFY(loaded.wait(30000));
        QCOMPARE(window.document()->filePath(), paths[0]);
    }
};

QTEST_MAIN(tst_MemoryViews)
#include "tst_memoryviews.moc"
