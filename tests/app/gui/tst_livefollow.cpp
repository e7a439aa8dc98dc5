// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "livecontroller.h"
#include "livefollow.h"
#include "mainwindow.h"
#include "models/layermodel.h"
#include "replayprocess.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/plan/headroom.h"
#include "core/plan/planner.h"

#include <QAction>
#include <QLabel>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolButton>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
const QString kKineto = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_v100_rank1.pt.trace.json.gz");

// What a LiveFollow handed on until it ended.
struct Seen
{
    std::vector<DocumentPtr> documents;
    std::vector<LiveStatus> statuses;
    std::optional<LiveStatus> ended;
    QString failure;
};

Seen followUntilItEnds(LiveFollow &live)
{
    Seen seen;
    QObject::connect(&live, &LiveFollow::documentReady,
                     [&](const DocumentPtr &document, const LiveStatus &) { seen.documents.push_back(document); });
    QObject::connect(&live, &LiveFollow::statusChanged, [&](const LiveStatus &status) { seen.statuses.push_back(status); });
    QObject::connect(&live, &LiveFollow::ended, [&](const LiveStatus &status) { seen.ended = status; });
    QObject::connect(&live, &LiveFollow::failed, [&](const QString &message) { seen.failure = message; });
    // The callers check how it ended.
    (void)QTest::qWaitFor([&] { return seen.ended || !seen.failure.isEmpty(); }, 120000);
    return seen;
}

// Starts the test writer on the sample, committing 300 events every `pauseMs` and killed
// after `commits` commits.
bool startKilledWriter(QProcess &writer, const QString &out, int pauseMs, int commits)
{
    return test::startLiveWriter(writer, {kSample, out, QStringLiteral("--commit-every"), QStringLiteral("300"),
                                          QStringLiteral("--pause-ms"), QString::number(pauseMs), QStringLiteral("--die-after"),
                                          QString::number(commits)});
}

// The test writer has ended (it may have before anyone waited).
bool writerEnded(QProcess &writer)
{
    return writer.state() == QProcess::NotRunning || writer.waitForFinished(60000);
}

// Its first commit is in the file: opened now, the file is being written.
bool firstCommit(QProcess &writer)
{
    return QTest::qWaitFor([&] { return writer.canReadLine(); }, 30000);
}

// The sample written again with the device's memory (bytes) in its metadata; its path.
QString sampleWithCapacity(const QTemporaryDir &dir, const QString &bytes)
{
    Trace sample = *TraceReader::read(kSample.toStdString());
    sample.meta["device.memory"] = bytes.toStdString();
    const QString input = dir.filePath(QStringLiteral("input.peaklens"));
    TraceWriter::writeTrace(sample, input.toStdString());
    return input;
}

// Empty when the traces are equal, else which of their tables differ.
QString differences(const Trace &a, const Trace &b)
{
    QStringList parts;
    const auto compare = [&](const char *table, bool same, std::size_t sizeA, std::size_t sizeB) {
        if (!same)
            parts << QStringLiteral("%1 (%2 against %3)").arg(QLatin1String(table)).arg(sizeA).arg(sizeB);
    };
    compare("meta", a.meta == b.meta, a.meta.size(), b.meta.size());
    compare("lanes", a.lanes == b.lanes, a.lanes.size(), b.lanes.size());
    compare("layers", a.layers == b.layers, a.layers.size(), b.layers.size());
    compare("events", a.events == b.events, a.events.size(), b.events.size());
    compare("reserved", a.reserved == b.reserved, a.reserved.size(), b.reserved.size());
    compare("ranges", a.ranges == b.ranges, a.ranges.size(), b.ranges.size());
    compare("steps", a.steps == b.steps, a.steps.size(), b.steps.size());
    compare("kernels", a.kernels == b.kernels, a.kernels.size(), b.kernels.size());
    compare("markers", a.markers == b.markers, a.markers.size(), b.markers.size());
    if (parts.isEmpty() && !(a == b))
        parts << QStringLiteral("stacks or kernel names");
    return parts.join(QStringLiteral(", "));
}

#define COMPARE_TRACES(a, b)                                                                                                     \
    do {                                                                                                                         \
        const QString differ = differences(a, b);                                                                                \
        QVERIFY2(differ.isEmpty(), qPrintable(QStringLiteral("the traces differ in ") + differ));                                \
    } while (false)

} // namespace

class tst_LiveFollow : public QObject
{
    Q_OBJECT

private slots:
    void followsUntilTheWriterFinishes_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<int>("commitEvery");
        QTest::newRow("replayed training steps") << kSample << 300;
        QTest::newRow("real Kineto trace, V100") << kKineto << 2000;
    }

    // The documents grow commit by commit; the last one is the finished file, read whole,
    // analysed as opening it would.
    void followsUntilTheWriterFinishes()
    {
        QFETCH(QString, input);
        QFETCH(int, commitEvery);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {input, out, QStringLiteral("--commit-every"), QString::number(commitEvery),
                                               QStringLiteral("--pause-ms"), QStringLiteral("60")}));
        LiveFollow live(out, 20);
        const Seen seen = followUntilItEnds(live);
        QVERIFY(writerEnded(writer));
        QVERIFY2(seen.failure.isEmpty(), qPrintable(seen.failure));
        QVERIFY(seen.ended);
        QCOMPARE(seen.ended->writer, TraceFollower::Writer::Finished);
        QVERIFY(!live.isFollowing());

        const TracePtr whole = TraceReader::read(out.toStdString());
        QVERIFY2(seen.documents.size() >= 3, qPrintable(QString::number(seen.documents.size())));
        for (std::size_t i = 1; i < seen.documents.size(); ++i)
            QVERIFY(seen.documents[i]->trace->events.size() >= seen.documents[i - 1]->trace->events.size());
        QVERIFY(seen.documents.front()->trace->events.size() < whole->events.size());
        // Those handed on while it was written were kept up to date, not analysed again:
        // they show what analysing their trace whole shows, the steps completed so far.
        for (std::size_t i = 0; i + 1 < seen.documents.size(); ++i) {
            const DocumentPtr &live = seen.documents[i];
            const DocumentPtr fresh = analyseDocument(out, live->trace);
            QCOMPARE(live->peakBytes, fresh->peakBytes);
            QCOMPARE(live->device, fresh->device);
            const SharedPoints &curve = live->byCategory.allocated;
            for (const SeriesPoint &point : fresh->byCategory.allocated) {
                const auto after = std::upper_bound(curve.begin(), curve.end(), point.timeNs,
                                                    [](std::int64_t t, const SeriesPoint &p) { return t < p.timeNs; });
                QVERIFY(after != curve.begin());
                QCOMPARE(std::prev(after)->bytes, point.bytes);
            }
            QVERIFY(live->summary.steps.size() <= fresh->summary.steps.size());
            for (std::size_t k = 0; k < live->summary.steps.size(); ++k)
                QCOMPARE(live->summary.steps[k].peakAllocatedBytes, fresh->summary.steps[k].peakAllocatedBytes);
        }
        const DocumentPtr &last = seen.documents.back();
        COMPARE_TRACES(*last->trace, *whole);
        const DocumentPtr opened = analyseDocument(out, whole);
        QCOMPARE(last->peakBytes, opened->peakBytes);
        QCOMPARE(last->summary.steps.size(), opened->summary.steps.size());
        QCOMPARE(seen.ended->events, whole->events.size());
        QCOMPARE(seen.ended->completedSteps, whole->steps.size());
        QCOMPARE(seen.ended->peakBytes.value_or(-1), opened->peakBytes);
        // While it was written the status line said the step and its phase.
        const bool saidAStep = std::any_of(seen.statuses.begin(), seen.statuses.end(), [](const LiveStatus &status) {
            return status.writer == TraceFollower::Writer::Writing && status.step
                   && status.text().contains(QStringLiteral("step"));
        });
        QCOMPARE(saidAStep, !whole->steps.empty());
    }

    void stoppedWriterLeavesWhatItCommitted()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("killed.peaklens"));
        QProcess writer;
        QVERIFY(startKilledWriter(writer, out, 20, 4));
        LiveFollow live(out, 20);
        const Seen seen = followUntilItEnds(live);
        QVERIFY(writerEnded(writer));
        QCOMPARE(writer.exitCode(), 9);
        QVERIFY(seen.ended);
        QCOMPARE(seen.ended->writer, TraceFollower::Writer::Stopped);
        QVERIFY(seen.ended->text().startsWith(QStringLiteral("The writer stopped without finishing")));
        QCOMPARE(seen.documents.back()->trace->events.size(), std::size_t(4 * 300));
        COMPARE_TRACES(*seen.documents.back()->trace, *TraceReader::read(out.toStdString()));
    }

    // The live controller without a window: the badge while the run writes, each grown
    // document handed on, the stopped writer in the badge once it has ended.
    void controllerShowsTheRunAsItGoes()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("killed.peaklens"));
        QProcess writer;
        QVERIFY(startKilledWriter(writer, out, 20, 4));
        QVERIFY(firstCommit(writer));
        QWidget parent;
        QStatusBar status;
        LiveController live(&status, &parent);
        QSignalSpy grown(&live, &LiveController::grown);
        QSignalSpy ended(&live, &LiveController::ended);
        live.follow(out);
        QVERIFY(!live.badge()->isHidden());
        QCOMPARE(live.badge()->text(), QStringLiteral("● Live"));
        QVERIFY(ended.count() > 0 || ended.wait(120000));
        QVERIFY(writerEnded(writer));
        QVERIFY(grown.count() > 0);
        QCOMPARE(grown.last().first().value<DocumentPtr>()->trace->events.size(), std::size_t(4 * 300));
        QCOMPARE(live.badge()->text(), QStringLiteral("Writer stopped"));
        QVERIFY(!live.isWriting());
        QVERIFY(!live.stopAction()->isEnabled());
        QCOMPARE(live.stopRun(), QStringLiteral("No run is being followed."));
        live.stop();
        QVERIFY(live.badge()->isHidden());
        QVERIFY(!live.following());
    }

    // With the device's memory in the file, a step that peaks within 5 % of it is named in
    // the status line with the layer holding most, and the timeline draws the capacity.
    void headroomWarningNamesTheStep_data()
    {
        QTest::addColumn<QString>("capacity");
        QTest::addColumn<bool>("warned");
        QTest::newRow("280 MiB: the 273.8 MiB peak is within 5 %") << QStringLiteral("293601280") << true;
        QTest::newRow("300 MiB: it is not") << QStringLiteral("314572800") << false;
        QTest::newRow("80 GiB: far above") << QStringLiteral("85899345920") << false;
    }

    void headroomWarningNamesTheStep()
    {
        QFETCH(QString, capacity);
        QFETCH(bool, warned);
        QTemporaryDir dir;
        const QString input = sampleWithCapacity(dir, capacity);
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {input, out, QStringLiteral("--commit-every"), QStringLiteral("1000")}));
        LiveFollow live(out, 20);
        const Seen seen = followUntilItEnds(live);
        QVERIFY(writerEnded(writer));
        QVERIFY(seen.ended);
        const QString warning = seen.ended->headroomWarning;
        QCOMPARE(!warning.isEmpty(), warned);
        if (warned) {
            QVERIFY2(warning.contains(QStringLiteral("within 5 % of the device's 280.0 MiB"))
                         && warning.contains(QStringLiteral("most held by ")),
                     qPrintable(warning));
            QVERIFY(seen.ended->text().contains(warning));
            // With the warning comes the planner's cheapest toggle set, on what had been
            // recorded; on the finished run's model it keeps the 5 % too.
            const QString advice = seen.ended->headroomAdvice;
            QVERIFY2(advice.startsWith(QStringLiteral("checkpointing ")), qPrintable(advice));
            const CostModel &model = *seen.documents.back()->model;
            const Plan plan = planForStrategy(model, seen.ended->headroomStrategy.toStdString());
            QVERIFY(!plan.schedule.empty());
            QVERIFY(plan.prediction.peakBytes <= std::int64_t(capacity.toDouble() * (1 - kHeadroomMargin)));
        }

        TimelineView timeline;
        timeline.setDocument(seen.documents.back());
        QCOMPARE(timeline.deviceCapacity().value_or(0), capacity.toLongLong());
        bool drawn = false;
        for (int i = 0; i < timeline.itemCount(); ++i)
            drawn = drawn || timeline.item(i)->objectName() == QStringLiteral("capacity");
        QCOMPARE(drawn, capacity != QStringLiteral("85899345920"));
    }

    void damagedFileStopsFollowing()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("text.peaklens"));
        QFile file(out);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(300, 'x'));
        file.close();
        LiveFollow live(out, 20);
        const Seen seen = followUntilItEnds(live);
        QVERIFY2(seen.failure.contains(out) && seen.failure.contains(QStringLiteral("not a PeakLens trace")),
                 qPrintable(seen.failure));
    }

    // A file opened while it is written: the window follows it with a badge and a status
    // line, the timeline keeps the user's zoom, and the badge goes when the writer finishes.
    void windowFollowsAFileWhileItIsWritten()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {kSample, out, QStringLiteral("--commit-every"), QStringLiteral("300"),
                                               QStringLiteral("--pause-ms"), QStringLiteral("80")}));
        QVERIFY(firstCommit(writer));
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        QSignalSpy updated(&window, &MainWindow::liveUpdated);
        QSignalSpy ended(&window, &MainWindow::liveEnded);
        window.openFile(out);
        QVERIFY(QTest::qWaitFor([&] { return loaded.count() == 1; }, 30000));
        QVERIFY(window.live()->following());
        QVERIFY(window.live()->badge()->isVisible());
        QCOMPARE(window.live()->badge()->text(), QStringLiteral("● Live"));
        QVERIFY(QTest::qWaitFor([&] { return updated.count() >= 1; }, 30000));
        const std::size_t firstEvents = window.document()->trace->events.size();
        QVERIFY(window.statusBar()->currentMessage().startsWith(QStringLiteral("Live")));

        // Once a step is in there is a cost model; the user picks a strategy: later updates
        // keep it and its toggles, not "custom".
        QVERIFY(QTest::qWaitFor([&] { return window.document()->model.has_value(); }, 30000));
        window.setCheckpointStrategy(QStringLiteral("all"));
        const CheckpointSchedule chosen = window.layerModel()->schedule();
        QVERIFY(!chosen.empty());
        QCOMPARE(window.whatIfBar()->strategy(), WhatIfBar::Strategy::Rule);
        QCOMPARE(window.whatIfBar()->rule().toString(), std::string("all"));

        // The user zooms into the start: later updates keep that view.
        window.timeline()->zoomTo(window.timeline()->originNs(), window.timeline()->originNs() + 50'000'000);
        const QCPRange zoomed = window.timeline()->xAxis->range();
        const int before = updated.count();
        QVERIFY(QTest::qWaitFor([&] { return updated.count() > before || ended.count() > 0; }, 30000));
        QCOMPARE(window.timeline()->xAxis->range(), zoomed);
        QCOMPARE(window.whatIfBar()->strategy(), WhatIfBar::Strategy::Rule);
        QCOMPARE(window.whatIfBar()->rule().toString(), std::string("all"));
        QCOMPARE(window.layerModel()->schedule(), chosen);

        QVERIFY(QTest::qWaitFor([&] { return ended.count() == 1; }, 60000));
        QVERIFY(writerEnded(writer));
        QVERIFY(!window.live()->badge()->isVisible());
        QVERIFY(window.statusBar()->currentMessage().startsWith(QStringLiteral("Finished")));
        QVERIFY(window.document()->trace->events.size() > firstEvents);
        COMPARE_TRACES(*window.document()->trace, *TraceReader::read(out.toStdString()));
    }

    // Near the device's memory, a click ticks the planner's toggles; Run > Stop the
    // Followed Run sends the writer SIGTERM, the window keeps what it committed, and Rerun,
    // refused while the run was writing, can relaunch from there.
    void windowStopsTheRunItFollows()
    {
        QTemporaryDir dir;
        const QString input = sampleWithCapacity(dir, QStringLiteral("293601280")); // 280 MiB: 273.8 MiB steps are within 5 %
        const QString out = dir.filePath(QStringLiteral("stopped.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {input, out, QStringLiteral("--commit-every"), QStringLiteral("300"),
                                               QStringLiteral("--pause-ms"), QStringLiteral("300")}));
        QVERIFY(firstCommit(writer));
        MainWindow window;
        window.show();
        QSignalSpy ended(&window, &MainWindow::liveEnded);
        window.openFile(out);
        // A step came within 5 % of the device's memory: the warning offers the planner's
        // toggles, picked on what has been recorded so far, ticked with a click.
        QVERIFY(QTest::qWaitFor(
            [&] { return window.live()->following() && !window.live()->following()->status().headroomStrategy.isEmpty(); },
            60000));
        QToolButton *headroom = window.live()->headroomButton();
        QVERIFY(headroom->isVisible());
        const QString strategy = window.live()->following()->status().headroomStrategy;
        QVERIFY2(headroom->text().endsWith(QStringLiteral("checkpoint ") + strategy), qPrintable(headroom->text()));
        headroom->click();
        QVERIFY(!window.layerModel()->schedule().empty());
        QCOMPARE(window.layerModel()->schedule(), planForStrategy(*window.document()->model, strategy.toStdString()).schedule);

        auto *stop = window.findChild<QAction *>(QStringLiteral("stopRun"));
        QVERIFY(stop && stop->isEnabled());
        QAction *rerun = nullptr;
        for (QAction *action : window.findChildren<QAction *>())
            rerun = action->text() == QStringLiteral("&Rerun") ? action : rerun;
        QVERIFY(rerun && !rerun->isEnabled());
        const bool canRerun = !ReplayProcess::executable().isEmpty(); // not in a build without LibTorch
        QVERIFY2(!canRerun || rerun->toolTip().contains(QStringLiteral("still writing")), qPrintable(rerun->toolTip()));

        QCOMPARE(window.live()->stopRun(), QString());
        QVERIFY(QTest::qWaitFor([&] { return ended.count() == 1; }, 60000));
        QVERIFY(writerEnded(writer));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit); // SIGTERM, before it finished
        QVERIFY(!stop->isEnabled());
        QCOMPARE(window.live()->badge()->text(), QStringLiteral("Writer stopped"));
        const TracePtr committed = TraceReader::read(out.toStdString());
        QVERIFY(committed->events.size() < TraceReader::read(input.toStdString())->events.size());
        COMPARE_TRACES(*window.document()->trace, *committed);
        // The toggles stay; Rerun no longer waits for the run.
        QVERIFY(!window.layerModel()->schedule().empty());
        QVERIFY2(!rerun->toolTip().contains(QStringLiteral("still writing")), qPrintable(rerun->toolTip()));
        QCOMPARE(rerun->isEnabled(), canRerun);
        QCOMPARE(window.live()->stopRun(), QStringLiteral("No run is being followed."));
    }

    void windowSaysTheWriterStopped()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("killed.peaklens"));
        QProcess writer;
        QVERIFY(startKilledWriter(writer, out, 150, 5));
        QVERIFY(firstCommit(writer));
        MainWindow window;
        window.show();
        QSignalSpy ended(&window, &MainWindow::liveEnded);
        window.openFile(out);
        QVERIFY(QTest::qWaitFor([&] { return ended.count() == 1; }, 60000));
        QVERIFY(window.live()->badge()->isVisible());
        QCOMPARE(window.live()->badge()->text(), QStringLiteral("Writer stopped"));
        QVERIFY(window.statusBar()->currentMessage().startsWith(QStringLiteral("The writer stopped without finishing")));
        QCOMPARE(window.document()->trace->events.size(), std::size_t(5 * 300));
    }
};

QTEST_MAIN(tst_LiveFollow)
#include "tst_livefollow.moc"
