// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"
#include "tracefiledamage.h"

#include "documentloader.h"
#include "layereditor.h"
#include "mainwindow.h"
#include "models/keptmodel.h"
#include "models/layermodel.h"
#include "models/livesetmodel.h"
#include "models/runcomparisonmodel.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "replayprocess.h"
#include "runscontroller.h"
#include "runstore.h"
#include "widgets/allocatorpane.h"
#include "widgets/emptystate.h"
#include "widgets/keptpane.h"
#include "widgets/livesetpane.h"
#include "widgets/momenttext.h"
#include "widgets/paretopane.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"
#include "windowopen.h"

#include "core/analysis/allocatorstate.h"
#include "core/analysis/blockgroups.h"
#include "core/document/filesummary.h"
#include "core/format/schema.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/plan/planner.h"
#include "core/plan/plannotes.h"
#include "core/plan/predictor.h"
#include "core/plan/sharding.h"
#include "core/report/palette.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"
#include "core/trace/units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLibrary>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>

#include <csignal>
#include <tuple>

#include <memory>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

bool load(MainWindow &window, const QString &path)
{
    return test::openInWindow(window, path);
}

// A copy of the sample in `directory`, opened: a rerun is kept beside its baseline.
bool loadCopyOfSample(MainWindow &window, const QTemporaryDir &directory)
{
    const QString trace = directory.filePath(QStringLiteral("training-step.peaklens"));
    return QFile::copy(kSample, trace) && load(window, trace);
}

// This process's environment with no display and no Qt platform chosen.
QProcessEnvironment headlessEnvironment()
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        environment.remove(QString::fromLatin1(name));
    return environment;
}

// The sample with some metadata changed, written as a new trace.
QString writeVariant(const QTemporaryDir &directory, const QString &name, const std::map<std::string, std::string> &meta,
                     bool dropSpec = false)
{
    Trace trace = *loadDocument(kSample)->trace;
    for (const auto &[key, value] : meta)
        trace.meta[key] = value;
    if (dropSpec)
        trace.meta.erase(std::string(metakey::ReplaySpec));
    const QString path = directory.filePath(name);
    TraceWriter::writeTrace(trace, path.toStdString());
    return path;
}

// A trace as the collector leaves it: a command and working directory, no replay spec.
QString writeRecorded(const QTemporaryDir &directory, const QString &workDirectory)
{
    return writeVariant(directory, QStringLiteral("rank0-pid42.peaklens"),
                        {{"source.format", "cupti"},
                         {"command", R"(["python3", "train.py", "--lr", "0.1"])"},
                         {"cwd", workDirectory.toStdString()},
                         {"allocator.mode", "async"},
                         {"rank", "0"}},
                        true);
}

// The sample with a replay spec small enough that a rerun of many steps takes seconds.
QString writeSmallReplay(const QTemporaryDir &directory)
{
    return writeVariant(
        directory, QStringLiteral("small.peaklens"),
        {{"replay.spec", R"({"model":"gpt","layers":6,"d_model":32,"heads":2,"seq":16,"vocab":64,"batch":2,"seed":0})"},
         {"replay.options", R"({"device":"cpu","dtype":"fp32","micro_batches":1,"steps":3,"warmup":1})"}});
}

// A program of ours replaced, for a test, by a script found first through PEAKLENS_PLUGIN_DIR.
void writeTool(const QString &directory, const QString &name, const QByteArray &script)
{
    QVERIFY(QDir().mkpath(directory));
    QFile file(directory + QLatin1Char('/') + name);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(script);
    file.close();
    file.setPermissions(file.permissions() | QFileDevice::ExeOwner);
}

// A peaklens-cli that writes its pid and sleeps, found first through PEAKLENS_PLUGIN_DIR;
// returns where the pid goes.
QString installSleepingCli(const QTemporaryDir &directory)
{
    const QString pidFile = directory.filePath(QStringLiteral("child.pid"));
    const QString plugins = directory.filePath(QStringLiteral("plugins"));
    writeTool(plugins, QStringLiteral("peaklens-cli"), "#!/bin/sh\necho $$ > '" + pidFile.toUtf8() + "'\nexec sleep 60\n");
    qputenv("PEAKLENS_PLUGIN_DIR", plugins.toUtf8());
    return pidFile;
}

// The pid a stand-in wrote, once it has.
qint64 waitForPid(const QString &path)
{
    QFile file(path);
    if (!QTest::qWaitFor([&] { return file.exists() && file.size() > 0; }, 30000) || !file.open(QIODevice::ReadOnly))
        return 0;
    return file.readAll().trimmed().toLongLong();
}

bool processExists(qint64 pid)
{
    return ::kill(static_cast<pid_t>(pid), 0) == 0;
}

// The graph of the timeline that the legend names so; null when none.
QCPGraph *graphNamed(TimelineView *timeline, const QString &name)
{
    for (int i = 0; i < timeline->graphCount(); ++i) {
        if (timeline->graph(i)->name() == name)
            return timeline->graph(i);
    }
    return nullptr;
}

} // namespace

class tst_MainWindow : public QObject
{
    Q_OBJECT

private slots:
    void togglingALayerShowsThePredictorsPeak()
    {
        MainWindow window;
        window.show();
        QVERIFY(load(window, kSample));
        const DocumentPtr document = window.document();
        QVERIFY(document->model);
        LayerModel *layers = window.layerModel();
        QCOMPARE(layers->rowCount(), 5); // embed, blocks, ln_f, head, loss; the blocks below "blocks"

        const auto &chain = document->model->layers;
        QVERIFY(
            layers->setData(layers->indexOfLayer(chain[2].layer, LayerModel::CheckpointColumn), Qt::Checked, Qt::CheckStateRole));
        std::vector<bool> toggles(chain.size(), false);
        toggles[2] = true;
        const Prediction prediction = predict(*document->model, toggles);
        const QString expected = QStringLiteral("peak ") + QString::fromStdString(formatBytes(prediction.peakBytes));
        QVERIFY2(window.whatIfBar()->predictedPeakText().contains(expected), qPrintable(window.whatIfBar()->predictedPeakText()));
        QVERIFY(prediction.peakBytes < predict(*document->model, CheckpointSchedule{}).peakBytes);
    }

    // A strategy with segments ticks all their layers but predicts the segments, not the
    // layers one by one; ticking a layer by hand goes back to single layers.
    void segmentsArePredictedAsSegments()
    {
        MainWindow window;
        QVERIFY(load(window, kSample));
        const CostModel &model = *window.document()->model;
        QVERIFY(model.layers.size() >= 4);
        window.setCheckpointStrategy(QStringLiteral("sqrt"));
        const Plan segments = planForStrategy(model, "sqrt");
        QVERIFY(!isPerLayer(segments.schedule));
        QCOMPARE(window.layerModel()->checkpoint(), segments.checkpoint);
        const auto shown = [&] { return window.whatIfBar()->predictedPeakText(); };
        QVERIFY2(shown().contains(QStringLiteral("peak ") + QString::fromStdString(formatBytes(segments.prediction.peakBytes))),
                 qPrintable(shown()));
        const Prediction oneByOne = predict(model, segments.checkpoint);
        QVERIFY(oneByOne.peakBytes != segments.prediction.peakBytes);

        LayerModel *layers = window.layerModel();
        QVERIFY(layers->setData(layers->indexOfLayer(model.layers.back().layer, LayerModel::CheckpointColumn), Qt::Checked,
                                Qt::CheckStateRole));
        std::vector<bool> ticked = segments.checkpoint;
        ticked.back() = true;
        QVERIFY2(
            shown().contains(QStringLiteral("peak ") + QString::fromStdString(formatBytes(predict(model, ticked).peakBytes))),
            qPrintable(shown()));
    }

    // The blocks kept for backward follow the toggles: a layer ticked recomputes its own.
    void theKeptTabFollowsTheToggles()
    {
        MainWindow window;
        QVERIFY(load(window, kSample));
        auto *pane = window.findChild<KeptPane *>(QStringLiteral("kept"));
        QVERIFY(pane);
        const auto policies = [&](const std::string &layer) {
            std::set<QString> seen;
            for (const KeptActivation &row : pane->model()->rows()) {
                if (row.layer == layer)
                    seen.insert(QString::fromLatin1(keptPolicyName(row.policy)) + QLatin1Char(' ') + test::qs(row.unit));
            }
            return seen;
        };
        QVERIFY(pane->model()->rowCount() > 0);
        QCOMPARE(policies("blocks.1"), std::set<QString>{QStringLiteral("SAVE ")});
        QVERIFY2(pane->title().endsWith(QStringLiteral("the plan recomputes 0 B of it.")), qPrintable(pane->title()));
        window.setCheckpointStrategy(QStringLiteral("blocks.1"));
        QCOMPARE(policies("blocks.1"), std::set<QString>{QStringLiteral("RECOMPUTE blocks.1")});
        QCOMPARE(policies("blocks.2"), std::set<QString>{QStringLiteral("SAVE ")});
        QVERIFY2(!pane->title().endsWith(QStringLiteral("the plan recomputes 0 B of it.")), qPrintable(pane->title()));
    }

    // The trade-offs tab holds `pareto`'s plans, checkpoints alone and with every policy,
    // the first of each the step as measured; choosing one ticks its units, as the
    // what-if then predicts the plan's figures.
    void theTradeOffsTabAppliesAPlan()
    {
        MainWindow window;
        auto *pane = window.findChild<ParetoPane *>(QStringLiteral("pareto"));
        QVERIFY(pane);
        QSignalSpy shown(pane, &ParetoPane::plansShown);
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt")));
        QVERIFY(pane->rows().empty()); // found only once the tab is shown
        window.show();
        window.showDetail(QStringLiteral("pareto"));
        QVERIFY(!shown.isEmpty() || shown.wait(30000));
        const CostModel &model = *window.document()->model;
        PlannerOptions every;
        every.perOpPolicies = every.offload = true;
        const auto whole = paretoSweep(model, 24), all = paretoSweep(model, 24, every);
        QCOMPARE(pane->rows().size(), whole.size() + all.size());
        const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes;
        QCOMPARE(pane->rows().front().plan.prediction.peakBytes, measured);
        QVERIFY(!pane->rows().front().everyPolicy && pane->rows().back().everyPolicy);
        // With offloading weighed, the plans reach lower than checkpoints alone do here.
        const auto lowest = [&](bool everyPolicy) {
            std::int64_t low = INT64_MAX;
            for (const ParetoPane::Row &row : pane->rows()) {
                if (row.everyPolicy == everyPolicy)
                    low = std::min(low, row.plan.prediction.peakBytes);
            }
            return low;
        };
        QVERIFY2(lowest(true) < lowest(false), qPrintable(QStringLiteral("%1 %2").arg(lowest(true)).arg(lowest(false))));
        const auto chosen = std::find_if(pane->rows().begin(), pane->rows().end(), [](const ParetoPane::Row &row) {
            return row.everyPolicy && !row.plan.schedule.empty();
        });
        QVERIFY(chosen != pane->rows().end());
        pane->choose(static_cast<int>(chosen - pane->rows().begin()));
        QCOMPARE(window.layerModel()->schedule(), chosen->plan.schedule);
        QVERIFY2(window.whatIfBar()->predictedPeakText().contains(
                     QString::fromStdString(formatBytes(chosen->plan.prediction.peakBytes))),
                 qPrintable(window.whatIfBar()->predictedPeakText()));
    }

    // Run > Plan for One Rank of a Sharded Run: the open trace becomes one rank of two
    // sharding it, whose baseline is the peak `plan --shard-degree 2` predicts; a rank
    // predicted rather than recorded cannot be rerun.
    void aShardedRankIsPlannedAndNotRerun()
    {
        MainWindow window;
        const QString unsharded = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/fsdp/unsharded.peaklens");
        QVERIFY(load(window, unsharded));
        const std::int64_t whole = predict(*window.document()->model, CheckpointSchedule{}).peakBytes;
        QSignalSpy edited(&window, &MainWindow::documentEdited);
        window.planShardedRank(2, 3);
        QVERIFY(edited.wait(30000));
        const TraceDocument &rank = *window.document();
        const Trace expected = withSharding(*loadTrace(test::ss(unsharded)), {}, Sharding{2, 3, true});
        QCOMPARE(predict(*rank.model, CheckpointSchedule{}).peakBytes,
                 predict(buildCostModel(expected), CheckpointSchedule{}).peakBytes);
        QVERIFY(predict(*rank.model, CheckpointSchedule{}).peakBytes < whole);
        QVERIFY(test::qs(rank.trace->metaValue(metakey::Sharding)).startsWith(QStringLiteral("one rank of 2")));
        QAction *rerun = nullptr;
        for (QAction *action : window.findChildren<QAction *>()) {
            if (action->text() == QStringLiteral("&Rerun"))
                rerun = action;
        }
        QVERIFY(rerun);
        QVERIFY(!rerun->isEnabled());
        QVERIFY2(rerun->toolTip().contains(QStringLiteral("predicted rather than recorded")), qPrintable(rerun->toolTip()));
    }

    // The whole loop on the CPU: toggle, rerun with peaklens-replay, find the measured run.
    void rerunJoinsTheRunsList()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        MainWindow window;
        QVERIFY(loadCopyOfSample(window, directory));
        QCOMPARE(window.runsPane()->runs()->rowCount(), 1); // the baseline
        window.setCheckpointStrategy(QStringLiteral("all"));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        // The rerun's trace is handed on to be followed as soon as its first step is in.
        QSignalSpy started(window.findChild<ReplayProcess *>(), &ReplayProcess::traceStarted);
        window.rerun();
        QVERIFY(finished.wait(300000));
        QCOMPARE(window.runsPane()->runs()->rowCount(), 2);
        QCOMPARE(started.count(), 1);
        const RunRecord &run = window.runsPane()->runs()->run(1);
        QVERIFY2(run.outcome().isEmpty(), qPrintable(run.outcome()));
        QCOMPARE(run.checkpoint().size(), qsizetype(window.document()->model->layers.size()));
        QVERIFY(run.row.measured.peakAllocatedBytes && run.measuredStepMs());
        QVERIFY(*run.row.measured.peakAllocatedBytes < *window.runsPane()->runs()->run(0).row.measured.peakAllocatedBytes);
        QVERIFY(run.document);
        QCOMPARE(started.first().first().toString(), run.document->filePath());
        QCOMPARE(QString::fromStdString(run.document->trace->metaValue("checkpoint")), run.checkpoint().join(QLatin1Char(',')));
        // The comparison shows the checkpointed blocks keeping less for the backward pass.
        RunComparisonModel *comparison = window.runsPane()->comparison();
        QVERIFY(comparison->rowCount() > 0);
        int smaller = 0;
        for (int row = 0; row < comparison->rowCount(); ++row) {
            if (comparison->index(row, RunComparisonModel::LayerColumn).data().toString().startsWith(QStringLiteral("blocks."))
                && comparison->index(row, RunComparisonModel::BytesChangeColumn).data(RunComparisonModel::SortRole).toLongLong()
                       < 0)
                ++smaller;
        }
        QCOMPARE(smaller, int(run.checkpoint().size()));
    }

    // A rerun of segments (sqrt) is predicted as segments in the Runs table and in the
    // report written from the window alike.
    void rerunOfSegmentsIsReportedAsTheRunsTableShowsIt()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        MainWindow window;
        QVERIFY(loadCopyOfSample(window, directory));
        window.setCheckpointStrategy(QStringLiteral("sqrt"));
        const Plan segments = planForStrategy(*window.document()->model, "sqrt");
        QVERIFY(!isPerLayer(segments.schedule));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(300000));
        QCOMPARE(window.runsPane()->runs()->rowCount(), 2);
        const RunRecord &run = window.runsPane()->runs()->run(1);
        QVERIFY2(run.outcome().isEmpty(), qPrintable(run.outcome()));
        QCOMPARE(run.row.predicted.peakBytes, segments.prediction.peakBytes);

        const QString out = directory.filePath(QStringLiteral("report.json"));
        QSignalSpy exported(&window, &MainWindow::reportExported);
        window.exportReportTo(out);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.front().at(1).toString().isEmpty(), qPrintable(exported.front().at(1).toString()));
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray comparisons = QJsonDocument::fromJson(file.readAll()).object()[QStringLiteral("comparisons")].toArray();
        QCOMPARE(comparisons.size(), qsizetype(1));
        const QJsonObject comparison = comparisons.first().toObject();
        QVERIFY2(comparison[QStringLiteral("problem")].isNull(), qPrintable(comparison[QStringLiteral("problem")].toString()));
        QCOMPARE(comparison[QStringLiteral("predicted")].toObject()[QStringLiteral("peak_bytes")].toInteger(),
                 run.row.predicted.peakBytes);
    }

    // Quitting while a rerun or a recording runs stops the child and does not crash: the
    // child's end is not reported to a window that is going away.
    void quitWhileAChildRuns_data()
    {
        QTest::addColumn<bool>("recording");
        QTest::addRow("during a rerun") << false;
        QTest::addRow("during a recording") << true;
    }

    void quitWhileAChildRuns()
    {
        QFETCH(bool, recording);
        QTemporaryDir directory;
        const QString pidFile = installSleepingCli(directory);
        const auto restore = qScopeGuard([] { qunsetenv("PEAKLENS_PLUGIN_DIR"); });

        auto window = std::make_unique<MainWindow>();
        if (recording) {
            window->recordDialog()->setCommand(QStringLiteral("python3 train.py"), directory.path());
            window->recordDialog()->setHost(QString());
            window->recordDialog()->startRecording();
            QVERIFY(window->recordDialog()->isRecording());
        } else {
            QVERIFY(load(*window, writeRecorded(directory, directory.path())));
            window->rerun();
            QVERIFY(window->runs()->isRerunning());
        }
        const qint64 pid = waitForPid(pidFile);
        QVERIFY(pid > 0 && processExists(pid));
        window.reset();
        QVERIFY2(!processExists(pid), "the child outlived the window");
    }

    // Cancel stops a rerun at once, without blocking the window for the child's grace time.
    void cancelDoesNotBlock()
    {
        QTemporaryDir directory;
        const QString pidFile = installSleepingCli(directory);
        const auto restore = qScopeGuard([] { qunsetenv("PEAKLENS_PLUGIN_DIR"); });
        MainWindow window;
        QVERIFY(load(window, writeRecorded(directory, directory.path())));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(waitForPid(pidFile) > 0);
        window.cancel();
        QVERIFY(window.runs()->isRerunning()); // returned before the child has gone
        QVERIFY(finished.wait(10000));
        QCOMPARE(window.runsPane()->runs()->run(1).outcome(), QStringLiteral("cancelled"));
        QVERIFY(!window.runs()->isRerunning());
    }

    // A rerun with no toggles measures the baseline again beside it, step by step, and
    // reports the difference as noise; the measured curve lies on the baseline's step.
    void rerunWithoutTogglesIsWithinItsSpread()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        MainWindow window;
        QVERIFY(load(window, writeSmallReplay(directory)));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(300000));
        const RunRecord &run = window.runsPane()->runs()->run(1);
        QVERIFY2(run.outcome().isEmpty(), qPrintable(run.outcome()));
        const auto change = run.stepChange().measured;
        QVERIFY(change);
        QVERIFY(change->paired);
        QCOMPARE(change->run.samples, std::size_t(10));
        QCOMPARE(change->baseline.samples, std::size_t(10));
        QVERIFY2(change->withinNoise(), qPrintable(RunsModel::changeText(*change)));
        const QString shown = window.runsPane()->runs()->index(1, RunsModel::MeasuredChangeColumn).data().toString();
        QVERIFY2(shown.startsWith(QStringLiteral("within noise")) || shown.startsWith(QStringLiteral("too noisy")),
                 qPrintable(shown));
        // No toggles: the model predicts no change, as the what-if bar said.
        QCOMPARE(window.runsPane()->runs()->index(1, RunsModel::PredictedChangeColumn).data().toString(),
                 QStringLiteral("+0.0 %"));
        QCOMPARE(run.row.measured.peakAllocatedBytes, run.row.measured.baselinePeakAllocatedBytes());

        // The measured curve spans the baseline's step, on the baseline's clock, its peak marked.
        const CostModel &model = *window.document()->model;
        const auto &curve = window.timeline()->comparison();
        QVERIFY(curve.size() > 2);
        QCOMPARE(curve.front().timeNs, model.stepBeginNs);
        const auto step = std::find_if(window.document()->trace->steps.begin(), window.document()->trace->steps.end(),
                                       [&](const Step &s) { return s.number == model.step; });
        QVERIFY(step != window.document()->trace->steps.end());
        QCOMPARE(curve.back().timeNs, step->endNs);
    }

    // Selecting a run brings back its toggles and their prediction.
    void selectingARunRestoresItsToggles()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        MainWindow window;
        QVERIFY(load(window, writeSmallReplay(directory)));
        window.setCheckpointStrategy(QStringLiteral("every:2"));
        const std::vector<bool> everySecond = window.layerModel()->checkpoint();
        const QString predicted = window.whatIfBar()->predictedPeakText();
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(300000));
        window.runsPane()->selectRow(0);
        QVERIFY(std::none_of(window.layerModel()->checkpoint().begin(), window.layerModel()->checkpoint().end(),
                             [](bool on) { return on; }));
        QVERIFY(window.timeline()->comparison().empty()); // the baseline is the chart itself
        // The Runs table repeats the change of step time the bar predicted for these toggles.
        const QString predictedChange = window.runsPane()->runs()->index(1, RunsModel::PredictedChangeColumn).data().toString();
        QVERIFY2(predicted.endsWith(QStringLiteral("(") + predictedChange + QStringLiteral(")")),
                 qPrintable(predicted + QStringLiteral(" | ") + predictedChange));
        window.runsPane()->selectRow(1);
        QCOMPARE(window.layerModel()->checkpoint(), everySecond);
        QCOMPARE(window.whatIfBar()->predictedPeakText(), predicted);
        QVERIFY(!window.timeline()->comparison().empty());
    }

    // Everything that showed the first trace shows the second after it opens.
    void openingAnotherFileResetsEveryPane()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        MainWindow window;
        window.show();
        QVERIFY(load(window, writeSmallReplay(directory)));
        window.setCheckpointStrategy(QStringLiteral("all"));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(300000));
        QVERIFY(window.runsPane()->comparison()->rowCount() > 0);
        QVERIFY(!window.timeline()->comparison().empty());
        window.selectLayer(QStringLiteral("blocks.0"));

        // A forward-only snapshot: no layers' what-if, no runs.
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_forward_fp32.pickle.gz")));
        QCOMPARE(window.runsPane()->runs()->rowCount(), 0);
        QCOMPARE(window.runsPane()->comparison()->rowCount(), 0);
        QVERIFY(window.timeline()->comparison().empty());
        QVERIFY(!window.whatIfBar()->isEnabled());
        QCOMPARE(window.whatIfBar()->strategy(), WhatIfBar::Strategy::Rule);
        QCOMPARE(window.whatIfBar()->rule(), CheckpointStrategy());
        QVERIFY(window.windowTitle().startsWith(QStringLiteral("snapshot_cs336_forward_fp32")));
        QVERIFY(!window.runs()->isRerunning());
        // Its call stacks fill the stack pane.
        auto *grouping = window.findChild<QComboBox *>(QStringLiteral("liveGrouping"));
        grouping->setCurrentIndex(int(LiveSetModel::Grouping::Site));
        auto *liveView = window.findChild<LiveSetPane *>()->findChild<QTableView *>();
        liveView->setCurrentIndex(liveView->model()->index(0, 0));
        auto *stack = window.findChild<QPlainTextEdit *>(QStringLiteral("stackFrames"));
        QVERIFY(!stack->toPlainText().isEmpty());

        // And back: the sample's own baseline only, nothing ticked, no stack.
        QVERIFY(load(window, kSample));
        QVERIFY(stack->toPlainText().isEmpty());
        QCOMPARE(window.runsPane()->runs()->rowCount(), 1);
        QCOMPARE(window.runsPane()->comparison()->rowCount(), 0);
        QVERIFY(std::none_of(window.layerModel()->checkpoint().begin(), window.layerModel()->checkpoint().end(),
                             [](bool on) { return on; }));
    }

    // The live set groups by source file and by the frames a pattern matches, as
    // summary --group does; a pattern that is no regular expression says so and lists nothing.
    void theLiveSetGroupsByFileAndPattern()
    {
        MainWindow window;
        const QString path = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_first_step.pickle.gz");
        QVERIFY(load(window, path));
        auto *pane = window.findChild<LiveSetPane *>();
        auto *grouping = pane->findChild<QComboBox *>(QStringLiteral("liveGrouping"));
        auto *pattern = pane->findChild<QLineEdit *>(QStringLiteral("livePattern"));
        const DocumentPtr document = window.document();
        const LiveSet &live = *document->summary.peak.liveAtPeak;
        const auto names = [&] {
            QStringList out;
            for (int row = 0; row < pane->model()->rowCount(); ++row)
                out << pane->model()->index(row, LiveSetModel::NameColumn).data().toString() + QLatin1Char(' ')
                           + pane->model()->index(row, LiveSetModel::BlocksColumn).data().toString();
            return out;
        };
        const auto expected = [&](const char *grouping) {
            QStringList out;
            for (const GroupRow &row : groupBlocks(*document->trace, *document->sites, live, parseBlockGrouping(grouping)))
                out << QString::fromStdString(row.key) + QLatin1Char(' ') + QString::number(row.blocks);
            return out;
        };

        grouping->setCurrentIndex(int(LiveSetModel::Grouping::File));
        QVERIFY(pattern->isHidden());
        QCOMPARE(names(), expected("file"));
        QVERIFY(names().size() > 1);

        grouping->setCurrentIndex(int(LiveSetModel::Grouping::Pattern));
        QVERIFY(!pattern->isHidden());
        QCOMPARE(pane->model()->rowCount(), 0);
        pattern->setText(QStringLiteral("/(\\w+)\\.py:"));
        emit pattern->editingFinished();
        QCOMPARE(names(), expected("regex:/(\\w+)\\.py:"));
        QVERIFY(pane->model()->problem().isEmpty());

        pattern->setText(QStringLiteral("(model"));
        emit pattern->editingFinished();
        QCOMPARE(pane->model()->rowCount(), 0);
        QVERIFY(pane->model()->problem().contains(QStringLiteral("not a regular expression")));
    }

    // A real recording with a CUDA graph's pool, a MemPool and side streams: the timeline
    // stacks a band per pool (and per stream), each with its pool's reserved line ending at
    // what the file's segments reserve; the live set groups by pool, stream and stage as
    // summary --group does. A trace with one pool and one stream offers neither.
    void poolsAndStreamsAreBandsOfTheirOwn()
    {
        MainWindow window;
        window.show();
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_h200_pools_streams_graph.pickle.gz")));
        const DocumentPtr document = window.document();
        QVERIFY(document->hasGrouping(GroupBy::Pool));
        QVERIFY(document->hasGrouping(GroupBy::Stream));
        window.setGrouping(GroupBy::Pool);
        QCOMPARE(window.grouping(), GroupBy::Pool);
        QCOMPARE(window.timeline()->grouping(), GroupBy::Pool);
        for (const char *pool : {"default pool", "graph pool 1", "MemPool 1"}) {
            QVERIFY2(graphNamed(window.timeline(), QString::fromLatin1(pool)), pool);
            QVERIFY2(graphNamed(window.timeline(), QStringLiteral("reserved: ") + QString::fromLatin1(pool)), pool);
        }
        // The pools' lines end at what the file's segments reserve: 35,651,584 bytes in the graph
        // pool, 4,194,304 in the MemPool.
        const auto lastValue = [&](const QString &name) {
            QCPGraph *graph = graphNamed(window.timeline(), name);
            return graph->data()->isEmpty() ? 0.0 : (graph->data()->constEnd() - 1)->value;
        };
        QCOMPARE(lastValue(QStringLiteral("reserved: graph pool 1")) / lastValue(QStringLiteral("reserved: MemPool 1")),
                 35651584.0 / 4194304.0);
        // Hovering says each pool's figures at that time: at the end, the file's segments'.
        const std::int64_t end = document->trace->events.timeNs(document->trace->events.size() - 1);
        const QString moment = momentText(*document, document->timeline(GroupBy::Pool), document->originNs(), end);
        QVERIFY2(moment.contains(QStringLiteral("graph pool 1: 33.00 MiB allocated of 34.00 MiB reserved, 1.000 MiB free in "
                                                "its segments")),
                 qPrintable(moment));
        QVERIFY2(moment.contains(QStringLiteral("MemPool 1: 3.000 MiB allocated of 4.000 MiB reserved")), qPrintable(moment));
        window.setGrouping(GroupBy::Stream);
        QVERIFY(graphNamed(window.timeline(), QStringLiteral("stream 0")));

        // The file's annotations are stages along the top, named where there is room.
        const auto stageNamed = [&](const QString &name) {
            for (int i = 0; i < window.timeline()->itemCount(); ++i) {
                if (auto *text = qobject_cast<QCPItemText *>(window.timeline()->item(i)); text && text->text() == name)
                    return true;
            }
            return false;
        };
        const Range *optimizer = nullptr;
        for (const Range &range : document->trace->ranges) {
            if (range.stage != kNoStage && document->trace->stageNames[range.stage] == "Optimizer.step#AdamW.step")
                optimizer = &range;
        }
        QVERIFY(optimizer);
        window.timeline()->zoomTo(optimizer->beginNs, optimizer->endNs);
        window.timeline()->refreshColumns();
        QVERIFY(stageNamed(QStringLiteral("Optimizer.step#AdamW.step")));

        auto *pane = window.findChild<LiveSetPane *>();
        auto *grouping = pane->findChild<QComboBox *>(QStringLiteral("liveGrouping"));
        const LiveSet &live = *document->summary.peak.liveAtPeak;
        for (const auto &[choice, text] :
             {std::pair(LiveSetModel::Grouping::Pool, "pool"), std::pair(LiveSetModel::Grouping::Stream, "stream"),
              std::pair(LiveSetModel::Grouping::Stage, "stage")}) {
            grouping->setCurrentIndex(int(choice));
            QStringList names, expected;
            for (int row = 0; row < pane->model()->rowCount(); ++row)
                names << pane->model()->index(row, LiveSetModel::NameColumn).data().toString();
            for (const GroupRow &row : groupBlocks(*document->trace, *document->sites, live, parseBlockGrouping(text)))
                expected << QString::fromStdString(row.key);
            QCOMPARE(names, expected);
            QVERIFY2(names.size() > 1, text);
        }

        QVERIFY(load(window, kSample));
        QVERIFY(!window.document()->hasGrouping(GroupBy::Pool));
        QCOMPARE(window.grouping(), GroupBy::Category); // what it had is not there: by category
    }

    // A category keeps its colour whichever trace is open and however large it is there;
    // the selected layer is drawn in a colour no category uses.
    void coloursStayWithTheirCategory()
    {
        MainWindow window;
        window.show();
        const QString traces[] = {kSample,
                                  QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz")};
        std::map<QString, QRgb> seen;
        std::map<QString, std::vector<int>> places; // where each category is stacked, per trace
        for (const QString &path : traces) {
            QVERIFY(load(window, path));
            for (int i = 0; i < kCategoryCount; ++i) {
                const auto category = static_cast<Category>(i);
                const QString name = QString::fromUtf8(palette::categoryLabel(category));
                QCPGraph *graph = graphNamed(window.timeline(), name);
                if (!graph)
                    continue;
                QCOMPARE(graph->brush().color().rgb(), QColor(static_cast<QRgb>(palette::categoryColor(category))).rgb());
                places[name].push_back(i);
                for (int g = 0; g < window.timeline()->graphCount(); ++g) {
                    if (window.timeline()->graph(g) == graph)
                        places[name].back() = g;
                }
                QVERIFY(!name.contains(QLatin1Char('_')));
            }
        }
        // The two traces stack some category in a different place, so ranks are not what colours them.
        QVERIFY(std::any_of(places.begin(), places.end(),
                            [](const auto &entry) { return entry.second.size() == 2 && entry.second[0] != entry.second[1]; }));

        // Switching the stacking with a layer selected keeps every legend entry named.
        window.selectLayer(QString::fromStdString(window.document()->trace->layers.front().path));
        window.setGrouping(GroupBy::Layer);
        window.setGrouping(GroupBy::Category);
        for (int i = 0; i < window.timeline()->graphCount(); ++i) {
            QCPGraph *graph = window.timeline()->graph(i);
            if (graph->visible())
                QVERIFY2(!graph->name().isEmpty() && !graph->name().startsWith(QStringLiteral("Graph")),
                         qPrintable(graph->name()));
        }
        QCPGraph *layer =
            graphNamed(window.timeline(),
                       QStringLiteral("memory of ") + QString::fromStdString(window.document()->trace->layers.front().path));
        QVERIFY(layer);
        for (int i = 0; i < kCategoryCount; ++i)
            QVERIFY(layer->pen().color().rgb()
                    != QColor(static_cast<QRgb>(palette::categoryColor(static_cast<Category>(i)))).rgb());
    }

    // Before a trace is open, and after a first file that fails, the window says what to do.
    void emptyStateSaysWhatToDo()
    {
        MainWindow window;
        window.show();
        auto *empty = window.findChild<EmptyState *>();
        QVERIFY(empty && empty->isVisible());
        QVERIFY(!window.timeline()->isVisible());
        QTemporaryDir directory;
        const QString bad = directory.filePath(QStringLiteral("notes.json"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"not\": \"a trace\"}");
        file.close();
        QVERIFY(!load(window, bad));
        QVERIFY(empty->isVisible());
        QVERIFY2(empty->problem().contains(bad), qPrintable(empty->problem()));
        QVERIFY(load(window, kSample));
        QVERIFY(!empty->isVisible());
        QVERIFY(window.timeline()->isVisible());
    }

    // The budget takes any unit.
    void budgetTakesAnyUnit_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<double>("bytes");
        QTest::addRow("GiB") << QStringLiteral("6 GiB") << 6.0 * 1024 * 1024 * 1024;
        QTest::addRow("MiB, no space") << QStringLiteral("512MiB") << 512.0 * 1024 * 1024;
        QTest::addRow("decimal GB") << QStringLiteral("6.5 GB") << 6.5e9;
        QTest::addRow("not a size") << QStringLiteral("lots") << 0.0;
    }

    void budgetTakesAnyUnit()
    {
        QFETCH(QString, typed);
        QFETCH(double, bytes);
        WhatIfBar bar;
        bar.findChild<QLineEdit *>(QStringLiteral("budget"))->setText(typed);
        QCOMPARE(bar.budgetBytes(), bytes);
    }

    // With "Per-op" ticked the budget's plan may checkpoint a layer with a per-op policy,
    // which the layer table shows.
    void theBudgetWeighsPerOpPoliciesWhenAsked()
    {
        MainWindow window;
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt")));
        auto *perOp = window.whatIfBar()->findChild<QCheckBox *>(QStringLiteral("perOp"));
        QVERIFY(perOp);
        window.whatIfBar()->chooseBudget(QStringLiteral("3004 KiB")); // 200 KiB below the measured peak
        QCOMPARE(window.layerModel()->schedule(), (CheckpointSchedule{{0, 0, {}}}));
        perOp->setChecked(true);
        const std::vector<std::string> saved{"aten.add.Tensor", "aten.addmm.default", "aten.native_layer_norm.default"};
        QCOMPARE(window.layerModel()->schedule(), (CheckpointSchedule{{0, 0, {}, kWholeLayer, saved}}));
        const std::uint32_t first = window.document()->model->layers[0].layer;
        QCOMPARE(window.layerModel()->indexOfLayer(first, LayerModel::PolicyColumn).data().toString(),
                 QStringLiteral("Save addmm +2"));
        // With "Offload" too, offloading blocks.0 (900 KiB out and back at 25 GB/s, 74 µs)
        // beats any recompute (11 ms and more).
        auto *offload = window.whatIfBar()->findChild<QCheckBox *>(QStringLiteral("offload"));
        QVERIFY(offload && offload->isVisible() == perOp->isVisible());
        offload->setChecked(true);
        QCOMPARE(window.layerModel()->schedule(), (CheckpointSchedule{{0, 0, {}, kWholeLayer, {}, KeptForm::Host}}));
        QCOMPARE(window.layerModel()->indexOfLayer(first, LayerModel::PolicyColumn).data().toString(), QStringLiteral("offload"));
    }

    void aTraceWithoutSpecCannotRerun()
    {
        const DocumentPtr document = loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        QVERIFY(
            ReplayProcess::unavailableReason(*document).contains(QStringLiteral("neither a replay spec nor a recorded command")));
    }

    // Two ranks of one run open together; the selector lists them by rank and switches.
    // A real snapshot of the allocator's state alone: no timeline, the Allocator pane in
    // front, and the verdict over it, the same sentence the CLI prints.
    void aStateOnlySnapshotOpensOnTheAllocator()
    {
        MainWindow window;
        window.show();
        const QString path = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_state_only_two_devices.pickle.gz");
        QVERIFY(load(window, path));
        QVERIFY(window.allocatorPane()->isVisible());
        QVERIFY(!window.timeline()->isVisible());
        const QString notes = window.notes()->text();
        QVERIFY2(notes.startsWith(QStringLiteral("Allocator state at dump time; no history was recorded.")), qPrintable(notes));
        const auto &trace = *window.document()->trace;
        QVERIFY(notes.contains(QString::fromStdString(judgeDumpState(trace, Device{DeviceType::Cuda, 0}).explanation)));
        QVERIFY(notes.contains(QStringLiteral("Verdict: fragmentation")));
        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("live at dump time")));

        QVERIFY(load(window, kSample)); // a trace with history brings the timeline back
        QVERIFY(window.timeline()->isVisible());
    }

    // What the what-if rests on is said over the timeline in the sentences `plan` prints,
    // and the checkboxes are the layer table's first column.
    void theNotesSayWhatPlanSays()
    {
        MainWindow window;
        window.show();
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_first_step.pickle.gz")));
        window.setCheckpointStrategy(QStringLiteral("all"));
        const CostModel &model = *window.document()->model;
        QStringList expected;
        const CheckpointSchedule all = singleLayerUnits(std::vector<bool>(model.layers.size(), true));
        for (const std::string &note : planNotes(model, all, predict(model, all)))
            expected << QString::fromStdString(note);
        QCOMPARE(window.notes()->text(), expected.join(QLatin1Char(' ')));
        QVERIFY(window.notes()->text().contains(QStringLiteral("profile_memory:40.TransformerLM:47[0]'s forward took 186.3 ms")));
        QVERIFY(window.notes()->wordWrap());
        QCOMPARE(window.layerModel()->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Checkpoint"));
    }

    void severalRanksOpenWithASelector()
    {
        QTemporaryDir directory;
        const QString rank1 = writeVariant(directory, QStringLiteral("rank1-pid11.peaklens"), {{"rank", "1"}, {"pid", "11"}});
        const QString rank0 = writeVariant(directory, QStringLiteral("rank0-pid10.peaklens"), {{"rank", "0"}, {"pid", "10"}});
        MainWindow window;
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        window.openFiles({rank1, rank0});
        QVERIFY(loaded.wait(60000));
        QCOMPARE(window.processes().size(), std::size_t(2));
        QCOMPARE(window.document()->filePath(), rank0); // ranks in order, the first shown
        auto *selector = window.findChild<QComboBox *>(QStringLiteral("processSelector"));
        QVERIFY(selector);
        QCOMPARE(selector->count(), 2);
        QCOMPARE(selector->itemText(0), QStringLiteral("rank 0 (pid 10)"));
        QCOMPARE(selector->itemText(1), QStringLiteral("rank 1 (pid 11)"));
        window.showProcess(1);
        QVERIFY(loaded.wait(60000));
        QCOMPARE(window.document()->filePath(), rank1);
        QCOMPARE(selector->currentIndex(), 1);
    }

    // A recorded trace reruns by relaunching its command under `peaklens-cli record`, in
    // its working directory, with the toggles in PEAKLENS_CHECKPOINT. A stand-in for
    // peaklens-cli (found first through PEAKLENS_PLUGIN_DIR) writes down what it was given
    // and leaves a trace, as the real one does on a GPU machine.
    void rerunOfARecordedTraceRelaunchesItsCommand()
    {
        QTemporaryDir directory;
        const QString workDirectory = directory.filePath(QStringLiteral("work"));
        QVERIFY(QDir().mkpath(workDirectory));
        const QString recorded = writeRecorded(directory, workDirectory);
        const QString pluginDirectory = directory.filePath(QStringLiteral("plugins"));
        QVERIFY(QDir().mkpath(pluginDirectory));
        QFile cli(pluginDirectory + QStringLiteral("/peaklens-cli"));
        QVERIFY(cli.open(QIODevice::WriteOnly));
        cli.write("#!/bin/sh\n"
                  "printf '%s\\n' \"$@\" > args.txt\n"
                  "printf '%s' \"$PEAKLENS_CHECKPOINT\" > checkpoint.txt\n"
                  "mkdir -p \"$7\"\n"
                  "cp '"
                  + kSample.toUtf8()
                  + "' \"$7/rank0-pid99.peaklens\"\n"
                    "printf '{\"format\": \"peaklens-gradients\", \"version\": 1, \"parameters\": {\"w\": [2.5, 0.5]}}' "
                    "> \"$7/rank0-pid99.gradients.json\"\n"
                    "echo 'recorded 1 trace file(s)'\n");
        cli.close();
        cli.setPermissions(cli.permissions() | QFileDevice::ExeOwner);
        qputenv("PEAKLENS_PLUGIN_DIR", pluginDirectory.toUtf8());
        const auto restore = qScopeGuard([] { qunsetenv("PEAKLENS_PLUGIN_DIR"); });

        MainWindow window;
        QVERIFY(load(window, recorded));
        QVERIFY2(ReplayProcess::unavailableReason(*window.document()).isEmpty(),
                 qPrintable(ReplayProcess::unavailableReason(*window.document())));
        window.setCheckpointStrategy(QStringLiteral("every:2"));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(60000));
        const RunRecord &run = window.runsPane()->runs()->run(1);
        QVERIFY2(run.outcome().isEmpty(), qPrintable(run.outcome()));
        QVERIFY(run.row.measured.peakAllocatedBytes && *run.row.measured.peakAllocatedBytes > 0);
        QVERIFY(run.measuredStepMs() && *run.measuredStepMs() > 0);
        // Each run noted the same first gradients beside its trace.
        QVERIFY(run.row.measured.gradients && run.row.measured.gradients->agree);

        QFile args(workDirectory + QStringLiteral("/args.txt"));
        QVERIFY2(args.open(QIODevice::ReadOnly), "the command did not run in the recorded working directory");
        const QStringList given = QString::fromUtf8(args.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(given.mid(0, 5), (QStringList{QStringLiteral("record"), QStringLiteral("--backend"), QStringLiteral("cupti"),
                                               QStringLiteral("--allocator"), QStringLiteral("async")}));
        QCOMPARE(given.mid(7), (QStringList{QStringLiteral("--"), QStringLiteral("python3"), QStringLiteral("train.py"),
                                            QStringLiteral("--lr"), QStringLiteral("0.1")}));
        QFile checkpoint(workDirectory + QStringLiteral("/checkpoint.txt"));
        QVERIFY(checkpoint.open(QIODevice::ReadOnly));
        QVERIFY(!run.checkpoint().isEmpty());
        QCOMPARE(QString::fromUtf8(checkpoint.readAll()), run.checkpoint().join(QLatin1Char(',')));
    }

    // The real peaklens-cli on a machine without a GPU: the run is a row saying why.
    void rerunOfARecordedTraceWithoutAGpuSaysWhy()
    {
        if (QLibrary(QStringLiteral("libcuda.so.1")).load())
            QSKIP("this machine has the NVIDIA driver; the relaunch would really run");
        QTemporaryDir directory;
        MainWindow window;
        QVERIFY(load(window, writeRecorded(directory, directory.path())));
        window.setCheckpointStrategy(QStringLiteral("all"));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(60000));
        const RunRecord &run = window.runsPane()->runs()->run(1);
        QVERIFY2(run.outcome().contains(QStringLiteral("needs a CUDA device")), qPrintable(run.outcome()));
        QVERIFY(!run.row.measured.peakAllocatedBytes);
    }

    // Through PyTorch's allocator (the first choice), a command that never imports torch
    // leaves no trace, and the dialog says so.
    void recordDialogWithoutTorchSaysWhy()
    {
        if (!QFileInfo::exists(QStringLiteral(PEAKLENS_BIN_DIR "/libpeaklens_torch.so")))
            QSKIP("the torch recorder is not built here (no LibTorch, or a sanitizer build)");
        QTemporaryDir directory;
        QSettings().remove(QStringLiteral("record/backend")); // as on a first recording
        RecordDialog dialog;
        QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("backend"))->currentData().toString(), QStringLiteral("torch"));
        dialog.setCommand(QStringLiteral("python3 -c \"print('training')\""), directory.path());
        dialog.setHost(QString()); // here, whatever was recorded on last
        QSignalSpy failed(&dialog, &RecordDialog::failed);
        dialog.startRecording();
        QVERIFY(failed.count() == 1 || failed.wait(30000));
        QVERIFY2(failed.front().front().toString().contains(QStringLiteral("no process of it imported torch")),
                 qPrintable(failed.front().front().toString()));
        QVERIFY(dialog.log().contains(QStringLiteral("training")));
    }

    void recordDialogThroughCuptiWithoutAGpuSaysWhy()
    {
        if (QLibrary(QStringLiteral("libcuda.so.1")).load())
            QSKIP("this machine has the NVIDIA driver; recording would really run");
        QTemporaryDir directory;
        RecordDialog dialog;
        auto *backend = dialog.findChild<QComboBox *>(QStringLiteral("backend"));
        backend->setCurrentIndex(backend->findData(QStringLiteral("cupti:exact")));
        dialog.setCommand(QStringLiteral("python3 -c \"print('training')\""), directory.path());
        dialog.setHost(QString()); // here, whatever was recorded on last
        QSignalSpy failed(&dialog, &RecordDialog::failed);
        QSignalSpy recorded(&dialog, &RecordDialog::recorded);
        dialog.startRecording();
        QVERIFY(dialog.isRecording() || failed.count() == 1);
        QVERIFY(failed.count() == 1 || failed.wait(30000));
        QVERIFY2(failed.front().front().toString().contains(QStringLiteral("needs a CUDA device")),
                 qPrintable(failed.front().front().toString()));
        QVERIFY(dialog.log().contains(QStringLiteral("needs a CUDA device")));
        QCOMPARE(recorded.count(), 0);

        // The next dialog starts from the last recording's command, folder and backend.
        RecordDialog next;
        QVERIFY(next.findChild<QLineEdit *>(QStringLiteral("command"))->text().contains(QStringLiteral("print('training')")));
        QCOMPARE(next.findChild<QComboBox *>(QStringLiteral("backend"))->currentData().toString(), QStringLiteral("cupti:exact"));
        QCOMPARE(next.findChild<QLineEdit *>(QStringLiteral("host"))->text(), QString());
    }

    // A recording that saw only the caching allocator's segments says why no layer has memory.
    void segmentOnlyRecordingSaysWhy()
    {
        QTemporaryDir directory;
        MainWindow window;
        QVERIFY(load(window, writeVariant(directory, QStringLiteral("native.peaklens"), {{"allocator.view", "segments"}})));
        QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("caching allocator")),
                 qPrintable(window.statusBar()->currentMessage()));
        QVERIFY(load(window, kSample));
        QVERIFY(!window.statusBar()->currentMessage().contains(QStringLiteral("caching allocator")));
    }

    // A real snapshot: sites name the user's code; the stack shows user frames first and
    // every frame one click away.
    void allocationSitesShowUserCodeAndTheFullStack()
    {
        MainWindow window;
        window.show();
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_forward_fp32.pickle.gz")));
        window.findChild<QComboBox *>(QStringLiteral("liveGrouping"))->setCurrentIndex(int(LiveSetModel::Grouping::Site));
        auto *view = window.findChild<LiveSetPane *>()->findChild<QTableView *>();
        int userRow = -1;
        for (int row = 0; row < view->model()->rowCount() && userRow < 0; ++row) {
            if (view->model()->index(row, LiveSetModel::NameColumn).data().toString() == QStringLiteral("SiLU (swiglu.py:10)"))
                userRow = row;
        }
        QVERIFY(userRow >= 0);
        view->setCurrentIndex(view->model()->index(userRow, 0));
        auto *stack = window.findChild<QPlainTextEdit *>(QStringLiteral("stackFrames"));
        QVERIFY2(stack->toPlainText().startsWith(QStringLiteral("SiLU (")), qPrintable(stack->toPlainText()));
        QVERIFY(stack->toPlainText().contains(QStringLiteral("called from forward (swiglu.py:34)")));
        QVERIFY(stack->toPlainText().contains(QStringLiteral("user        forward (")));
        QVERIFY(!stack->toPlainText().contains(QStringLiteral("torch::unwind::unwind()")));
        window.findChild<QCheckBox *>(QStringLiteral("allFrames"))->setChecked(true);
        QVERIFY(stack->toPlainText().contains(QStringLiteral("allocator   torch::unwind::unwind()")));

        // Hovering over an allocation names its site.
        const Trace &trace = *window.document()->trace;
        const AllocationSites &sites = *window.document()->sites;
        for (std::size_t i = 0; i + 1 < trace.events.size(); ++i) {
            const std::string label = sites.label(sites.siteOf(trace.events.stack(i)));
            if (trace.events.deltaBytes(i) > 0 && label == "SiLU (swiglu.py:10)"
                && trace.events.timeNs(i + 1) > trace.events.timeNs(i)) {
                const QString hover = momentText(*window.document(), window.document()->byCategory, 0, trace.events.timeNs(i));
                QVERIFY2(hover.contains(QStringLiteral("allocated at SiLU (swiglu.py:10)")), qPrintable(hover));
                return;
            }
        }
        QFAIL("no allocation of SiLU (swiglu.py:10) on its own time");
    }

    // A real snapshot's layers come from its call stacks: the user picks the chain,
    // renames and merges layers, and the what-if follows.
    void layersOfAnImportedTraceCanBeEdited()
    {
        MainWindow window;
        window.show();
        QVERIFY(load(window, QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz")));
        QVERIFY(window.document()->model);
        QCOMPARE(window.document()->model->layers.size(), std::size_t(24));
        QVERIFY(window.document()->model->backwardEstimated);
        const auto edit = [&](auto action) {
            QSignalSpy edited(&window, &MainWindow::documentEdited);
            action();
            return edited.wait(60000);
        };
        const Trace *trace = window.document()->trace.get();
        const auto found = trace->findLayer("nsys_profile:142.model:253[5]");
        QVERIFY(found);

        // The chain from the context menu: the calls of the loop that made the blocks.
        QMenu *menu = window.layerEditor()->menuFor(window.document(), *found, &window);
        QAction *loop = menu->findChild<QAction *>(QStringLiteral("chainOfSiblings"));
        QVERIFY(loop && loop->isEnabled());
        QVERIFY2(loop->text().contains(QStringLiteral("24 calls of model:253")), qPrintable(loop->text()));
        QVERIFY(edit([&] { loop->trigger(); }));
        QCOMPARE(window.document()->chain.layers.size(), std::size_t(24));
        QCOMPARE(window.document()->model->layers.front().path, std::string("nsys_profile:142.model:253[0]"));

        // Renaming a call renames the loop, each call keeping its number.
        QVERIFY(edit([&] { window.layerEditor()->rename(window.document(), *found, QStringLiteral("blocks")); }));
        QVERIFY(window.document()->trace->findLayer("nsys_profile:142.blocks[23]"));
        QVERIFY(!window.document()->trace->findLayer("nsys_profile:142.model:253[0]"));
        QCOMPARE(window.document()->model->layers.size(), std::size_t(24)); // the default chain again, renamed

        const Trace &renamed = *window.document()->trace;
        const std::uint32_t block0 = *renamed.findLayer("nsys_profile:142.blocks[0]");
        const std::int64_t activations = window.document()->summary.layers[block0].activationBytes;
        std::uint32_t sublayer = kNoLayer;
        for (std::uint32_t l = 0; l < renamed.layers.size() && sublayer == kNoLayer; ++l) {
            if (renamed.layers[l].parent == block0)
                sublayer = l;
        }
        QVERIFY(sublayer != kNoLayer);
        const std::string merged = renamed.layers[sublayer].path;
        QVERIFY(edit([&] { window.layerEditor()->mergeIntoParent(window.document(), sublayer); }));
        QVERIFY(!window.document()->trace->findLayer(merged));
        const std::uint32_t after = *window.document()->trace->findLayer("nsys_profile:142.blocks[0]");
        QCOMPARE(window.document()->summary.layers[after].activationBytes, activations);
    }

    // A big native file shows its levels from the running totals before its events are read,
    // with its peak in the status line; the window around its peak opens over them, the
    // whole run behind it. A small one opens whole, alone.
    void aBigFileShowsItsOverviewFirst()
    {
        QTemporaryDir directory;
        const QString big = directory.filePath(QStringLiteral("big.peaklens"));
        std::int64_t t = 0;
        {
            TraceBuilder builder;
            const std::uint32_t lane = builder.lane(Lane{Device{DeviceType::Cuda, 0}, 0});
            const std::size_t pairs = 3 * schema::kEventsPerChunk / 2; // more than the window's two chunks
            QVERIFY(2 * pairs >= DocumentLoader::kOverviewFromEvents);
            builder.reserveEvents(2 * pairs);
            for (std::size_t i = 0; i < pairs; ++i) {
                const std::int64_t bytes = 512 * static_cast<std::int64_t>(1 + i % 64);
                const std::uint64_t addr = 0x1000000 + (i % 4096) * 0x10000;
                builder.addEvent(MemoryEvent{t += 10, bytes, addr, lane, kNoLayer, 0, Category::Activation, Phase::Forward});
                builder.addEvent(MemoryEvent{t += 10, -bytes, addr, lane, kNoLayer, 0, Category::Activation, Phase::Forward});
            }
            TraceWriter::writeTrace(*builder.finish(), test::ss(big));
        }
        MainWindow window;
        QSignalSpy overview(&window, &MainWindow::overviewShown);
        bool overviewBeforeDocument = false;
        QString status;
        connect(&window, &MainWindow::overviewShown, this, [&] {
            overviewBeforeDocument = !window.document() && window.timeline()->showsOverview();
            status = window.statusBar()->currentMessage();
        });
        QVERIFY(load(window, big));
        QCOMPARE(overview.count(), 1);
        QVERIFY(overviewBeforeDocument);
        QVERIFY2(status.contains(QStringLiteral("running totals")) && status.contains(QStringLiteral("cuda:0")),
                 qPrintable(status));
        QVERIFY(window.document());
        QVERIFY(window.document()->trace->events.size() < 3 * schema::kEventsPerChunk);
        QVERIFY(window.timeline()->showsOverview());

        // Another stretch in full detail: the window from a later time (the end's, here), the
        // whole run still drawn behind it.
        QVERIFY(window.isWindow());
        QVERIFY(window.document()->trace->events.timeNs(window.document()->trace->events.size() - 1) < t);
        QSignalSpy reread(&window, &MainWindow::documentLoaded);
        window.loadWindowFrom(t * 9 / 10);
        QVERIFY(QTest::qWaitFor([&] { return reread.count() > 0; }, 60000));
        const Trace &later = *window.document()->trace;
        QCOMPARE(later.events.timeNs(later.events.size() - 1), t);
        QVERIFY(window.isWindow());
        QVERIFY(window.timeline()->showsOverview());

        QSignalSpy again(&window, &MainWindow::overviewShown);
        QVERIFY(load(window, kSample));
        QCOMPARE(again.count(), 0);
        QVERIFY(!window.timeline()->showsOverview());
    }

    // A file of another format as big (a huge snapshot, here trace text) opens the same
    // way, from its native copy in the cache: the window around its peak, the whole run
    // behind it.
    void aHugeFileOfAnotherFormatOpensAsAWindow()
    {
        QTemporaryDir dir;
        const test::ScopedCache cache;
        const QString huge = dir.filePath(QStringLiteral("huge.pltxt"));
        QVERIFY(test::writeAllocationsText(huge, (LoadBudget::kDocumentEvents + 3 * schema::kEventsPerChunk) / 2));
        MainWindow window;
        QSignalSpy overview(&window, &MainWindow::overviewShown);
        QVERIFY(load(window, huge));
        QVERIFY(window.isWindow());
        QCOMPARE(window.document()->filePath(), huge);
        QVERIFY(window.timeline()->showsOverview());
        QVERIFY(QFileInfo::exists(QString::fromStdString(nativeCopyPath(test::ss(huge)))));
    }

    // A trace on another machine opens as a local one, read through ssh (a real OpenSSH
    // server on a loopback port stands in for the GPU host); a refused key is one sentence.
    void aBadFileKeepsTheWindowUsable()
    {
        MainWindow window;
        QVERIFY(load(window, kSample));
        const DocumentPtr before = window.document();
        QTemporaryDir directory;
        const QString bad = directory.filePath(QStringLiteral("broken.peaklens"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("SQLite format 3\0 but nothing else", 34);
        file.close();
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openFile(bad);
        QVERIFY(failed.wait(30000));
        QVERIFY2(failed.front().front().toString().startsWith(bad), qPrintable(failed.front().front().toString()));
        QCOMPARE(window.document(), before);
        QVERIFY(load(window, kSample)); // and it opens the next one
    }

    // A rerun is kept beside its baseline and comes back with its figures when the baseline
    // is opened again in a new window, as after quitting; the next rerun is numbered after it.
    void rerunsSurviveReopening()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        const QString trace = writeSmallReplay(directory);
        QStringList shown;
        RunRecord first;
        {
            MainWindow window;
            QVERIFY(load(window, trace));
            window.setCheckpointStrategy(QStringLiteral("every:2"));
            QSignalSpy finished(&window, &MainWindow::rerunFinished);
            window.rerun();
            QVERIFY(finished.wait(300000));
            first = window.runsPane()->runs()->run(1);
            QVERIFY2(first.outcome().isEmpty(), qPrintable(first.outcome()));
            QVERIFY(first.kept);
            QCOMPARE(QFileInfo(first.folder).absolutePath(), runsFolderOf(trace));
            for (int column = 0; column < RunsModel::NumColumns; ++column)
                shown << window.runsPane()->runs()->index(1, column).data().toString();
        }
        MainWindow window;
        QVERIFY(load(window, trace));
        // A rerun starts at once, while the kept one is still being read back.
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(window.runs()->isRerunning());
        QVERIFY(QTest::qWaitFor(
            [&] { return window.runsPane()->runs()->rowCount() >= 2 && window.runsPane()->runs()->run(1).document; }, 60000));
        const RunRecord &restored = window.runsPane()->runs()->run(1);
        QCOMPARE(restored.label, first.label);
        QCOMPARE(restored.checkpoint(), first.checkpoint());
        QCOMPARE(restored.row.measured.peakAllocatedBytes, first.row.measured.peakAllocatedBytes);
        QCOMPARE(restored.row.measured.stepTimesMs, first.row.measured.stepTimesMs);
        QCOMPARE(restored.row.measured.baselineStepTimesMs(), first.row.measured.baselineStepTimesMs());
        QCOMPARE(restored.document->peakBytes, first.document->peakBytes);
        for (int column = 0; column < RunsModel::NumColumns; ++column)
            QCOMPARE(window.runsPane()->runs()->index(1, column).data().toString(), shown[column]);
        QVERIFY(finished.count() == 1 || finished.wait(300000));
        QCOMPARE(window.runsPane()->runs()->rowCount(), 3);
        QCOMPARE(window.runsPane()->runs()->run(2).label, QStringLiteral("rerun 2"));
        QVERIFY2(window.runsPane()->runs()->run(2).outcome().isEmpty(), qPrintable(window.runsPane()->runs()->run(2).outcome()));
    }

    // A rerun's folder and run.json read back as they were written, and a copy saved to a
    // folder elsewhere points at its own traces.
    void runsAreSavedAndReadBack()
    {
        QTemporaryDir directory;
        const QString baseline = directory.filePath(QStringLiteral("step.peaklens"));
        test::writeBytes(baseline, "a trace");
        RunRecord run;
        giveRunFolder(run, baseline);
        QVERIFY(run.kept);
        QCOMPARE(QFileInfo(run.folder).absolutePath(), runsFolderOf(baseline));
        QVERIFY(QDir().mkpath(run.folder + QStringLiteral("/run")));
        test::writeBytes(run.folder + QStringLiteral("/run/pid7.peaklens"), "the run's trace");
        run.label = QStringLiteral("rerun 1");
        run.row.strategy = CheckpointStrategy::parse("blocks.0..blocks.2,head");
        run.row.predicted.peakBytes = 123456789;
        run.row.predicted.stepTimeNs = 531000000;
        run.row.modelBaseline.stepTimeNs = 427000000;
        run.tracePaths = {run.folder + QStringLiteral("/run/pid7.peaklens")};
        run.row.measured.peakAllocatedBytes = 123000000;
        run.row.measured.stepTimesMs = {471.25, 470.5};
        run.row.measured.baseline = ReplaySteps{.stepTimesMs = {381.0, 383.75}};
        run.row.measured.gradients = ReplayGradientCheck{.maxRelativeDifference = 0.0, .agree = true};
        saveRun(run);
        QStringList problems;
        const std::vector<RunRecord> kept = keptRuns(baseline, &problems);
        QVERIFY(problems.isEmpty());
        QCOMPARE(kept.size(), std::size_t(1));
        const RunRecord &back = kept.front();
        QCOMPARE(back.label, run.label);
        QCOMPARE(back.checkpoint(), run.checkpoint());
        QCOMPARE(back.row.predicted.peakBytes, run.row.predicted.peakBytes);
        QCOMPARE(back.row.predicted.stepTimeNs, run.row.predicted.stepTimeNs);
        QCOMPARE(back.row.modelBaseline.stepTimeNs, run.row.modelBaseline.stepTimeNs);
        QCOMPARE(back.tracePaths, run.tracePaths);
        QCOMPARE(back.row.measured.peakAllocatedBytes, run.row.measured.peakAllocatedBytes);
        QCOMPARE(back.row.measured.stepTimesMs, run.row.measured.stepTimesMs);
        QCOMPARE(back.row.measured.baselineStepTimesMs(), run.row.measured.baselineStepTimesMs());
        QVERIFY(back.row.measured.gradients && back.row.measured.gradients->agree);

        QTemporaryDir elsewhere;
        RunRecord copy = run;
        saveRunTo(copy, elsewhere.path());
        QVERIFY(copy.kept);
        QVERIFY(copy.folder.startsWith(elsewhere.path()));
        QFile trace(copy.tracePaths.value(0));
        QVERIFY(trace.open(QIODevice::ReadOnly));
        QCOMPARE(trace.readAll(), QByteArray("the run's trace"));
        QVERIFY(QFileInfo::exists(copy.folder + QStringLiteral("/run.json")));
        RunRecord again = run;
        QVERIFY_THROWS_EXCEPTION(FileError, saveRunTo(again, elsewhere.path())); // never over what is there
    }

    // A trace with no memory at all opens, and every pane, the by-layer timeline and a
    // report show it: the empty snapshot PyTorch writes before the first allocation, the
    // native file convert makes of it, and a trace text holding one failed allocation.
    void emptyTracesOpenInEveryPane_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        // pickle.dumps({"segments": [], "device_traces": [[]]}, protocol=2)
        const QByteArray emptySnapshot = QByteArray::fromHex("80027d71002858080000007365676d656e747371015d7102580d000000646576"
                                                             "6963655f74726163657371035d71045d710561752e");
        QTest::newRow("empty snapshot") << QStringLiteral("empty.pickle") << emptySnapshot;
        QTest::newRow("0-event native file") << QStringLiteral("empty.peaklens") << emptySnapshot;
        QTest::newRow("an out-of-memory marker alone") << QStringLiteral("oom.pltxt") << QByteArray("oom 1048576\n");
    }
    void emptyTracesOpenInEveryPane()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QTemporaryDir directory;
        QString path = directory.filePath(name);
        if (name.endsWith(QLatin1String(".peaklens"))) {
            const QString snapshot = directory.filePath(QStringLiteral("empty.pickle"));
            test::writeBytes(snapshot, bytes);
            TraceWriter::writeTrace(*loadTrace(test::ss(snapshot)), test::ss(path));
        } else {
            test::writeBytes(path, bytes);
        }
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(load(window, path));
        QVERIFY(window.document()->trace->events.empty());
        for (const char *pane : {"live", "flame", "block", "allocator", "runs"}) {
            window.showDetail(QString::fromLatin1(pane));
            QTest::qWait(20);
        }
        window.setGrouping(GroupBy::Layer);
        QTest::qWait(20);
        QVERIFY(!window.grab().isNull());
        const QString out = directory.filePath(QStringLiteral("report.html"));
        QSignalSpy exported(&window, &MainWindow::reportExported);
        window.exportReportTo(out);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.front().at(1).toString().isEmpty(), qPrintable(exported.front().at(1).toString()));
    }

    // What --screenshot and --export-report must not write to, and what they say: one line,
    // exit 2, every file as it was. Run with no display and no QT_QPA_PLATFORM.
    void outputsThatMustNotBeWritten_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("problem");
        QTest::newRow("screenshot onto its input")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("input.pltxt"), QStringLiteral("input.pltxt")}
            << QStringLiteral("input.pltxt: must end in .png, .jpg or .bmp");
        QTest::newRow("screenshot onto a symbolic link to its input")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("link.png"), QStringLiteral("input.pltxt")}
            << QStringLiteral("link.png: is one of the inputs");
        QTest::newRow("screenshot onto a hard link to its input")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("hard.png"), QStringLiteral("input.pltxt")}
            << QStringLiteral("hard.png: is one of the inputs");
        QTest::newRow("screenshot onto an existing picture")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("existing.png"), QStringLiteral("input.pltxt")}
            << QStringLiteral("existing.png: already exists; pass --force to replace it.");
        QTest::newRow("screenshot onto a FIFO")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("fifo.png"), QStringLiteral("input.pltxt")}
            << QStringLiteral("fifo.png: is a pipe");
        QTest::newRow("screenshot as a text file")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("notes.txt"), QStringLiteral("input.pltxt")}
            << QStringLiteral("notes.txt: must end in .png, .jpg or .bmp");
        QTest::newRow("a size that cannot be painted")
            << QStringList{QStringLiteral("--size"), QStringLiteral("100000x100000"), QStringLiteral("--screenshot"),
                           QStringLiteral("new.png"), QStringLiteral("input.pltxt")}
            << QStringLiteral("is larger than PeakLens paints");
        QTest::newRow("a stacking there is none of")
            << QStringList{QStringLiteral("--stack-by"), QStringLiteral("colour"), QStringLiteral("--screenshot"),
                           QStringLiteral("new.png"), QStringLiteral("input.pltxt")}
            << QStringLiteral("give category, layer, pool or stream");
        QTest::newRow("report onto an existing report")
            << QStringList{QStringLiteral("--export-report"), QStringLiteral("existing.html"), QStringLiteral("input.pltxt")}
            << QStringLiteral("existing.html: already exists; pass --force to replace it.");
        QTest::newRow("report onto a FIFO") << QStringList{QStringLiteral("--export-report"), QStringLiteral("fifo.pdf"),
                                                           QStringLiteral("input.pltxt")}
                                            << QStringLiteral("fifo.pdf: is a pipe");
    }
    void outputsThatMustNotBeWritten()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, problem);
        QTemporaryDir directory;
        const QDir dir(directory.path());
        QVERIFY(QFile::copy(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"),
                            dir.filePath(QStringLiteral("input.pltxt"))));
        QVERIFY(QFile::link(QStringLiteral("input.pltxt"), dir.filePath(QStringLiteral("link.png"))));
        QCOMPARE(
            ::link(qPrintable(dir.filePath(QStringLiteral("input.pltxt"))), qPrintable(dir.filePath(QStringLiteral("hard.png")))),
            0);
        QCOMPARE(::mkfifo(qPrintable(dir.filePath(QStringLiteral("fifo.png"))), 0600), 0);
        QCOMPARE(::mkfifo(qPrintable(dir.filePath(QStringLiteral("fifo.pdf"))), 0600), 0);
        test::writeBytes(dir.filePath(QStringLiteral("existing.png")), "the user's picture");
        test::writeBytes(dir.filePath(QStringLiteral("existing.html")), "the user's page");
        const auto snapshot = [&] {
            QStringList state;
            for (const QFileInfo &entry : dir.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System, QDir::Name)) {
                QFile file(entry.absoluteFilePath());
                const bool regular = entry.isFile() && !entry.isSymLink();
                state << entry.fileName() + QLatin1Char(' ')
                             + (regular && file.open(QIODevice::ReadOnly) ? QString::fromLatin1(file.readAll().toHex().left(64))
                                                                          : QString());
            }
            return state;
        };
        const QStringList before = snapshot();
        QProcess app;
        app.setWorkingDirectory(directory.path());
        app.setProcessEnvironment(headlessEnvironment());
        app.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens"), arguments);
        QVERIFY(app.waitForFinished(30000));
        QCOMPARE(app.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.exitCode(), 2);
        const QString err = QString::fromUtf8(app.readAllStandardError());
        QVERIFY2(err.startsWith(QStringLiteral("peaklens: ")) && err.contains(problem), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
        QCOMPARE(snapshot(), before);
    }

    // The modes that open no window need no display: help, and a PDF report.
    void headlessModesNeedNoDisplay()
    {
        QTemporaryDir directory;
        const auto runApp = [&](const QStringList &arguments) {
            QProcess app;
            app.setProcessEnvironment(headlessEnvironment());
            app.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens"), arguments);
            app.waitForFinished(120000);
            return std::make_tuple(app.exitStatus() == QProcess::NormalExit ? app.exitCode() : -1, app.readAllStandardOutput(),
                                   app.readAllStandardError());
        };
        const auto [helpCode, help, helpErr] = runApp({QStringLiteral("--help")});
        QCOMPARE(helpCode, 0);
        QVERIFY(help.contains("--export-report"));
        const QString pdf = directory.filePath(QStringLiteral("r.pdf"));
        const auto [reportCode, wrote, reportErr] = runApp({QStringLiteral("--export-report"), pdf, kSample});
        QVERIFY2(reportCode == 0, reportErr.constData());
        QVERIFY2(reportErr.isEmpty(), reportErr.constData());
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.read(5) == "%PDF-");
        // A window cannot be opened there: one line saying so.
        const auto [windowCode, nothing, windowErr] = runApp({kSample});
        QCOMPARE(windowCode, 2);
        QVERIFY2(windowErr.startsWith("peaklens: there is no display") && windowErr.count('\n') == 1, windowErr.constData());
    }

    void screenshotWritesAPicture()
    {
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("window.png"));
        const auto run = test::runTool(QStringLiteral("peaklens"), {QStringLiteral("--screenshot"), out, kSample});
        QCOMPARE(run.exitCode, 0);
        const QImage image(out);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 800 && image.height() >= 500);
    }

    // The PDF has pages, and its text says the peak the summary says.
    void exportReportWritesAPdf()
    {
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("report.pdf"));
        const auto run = test::runTool(QStringLiteral("peaklens"), {QStringLiteral("--export-report"), out, kSample});
        QCOMPARE(run.exitCode, 0);
        QProcess info;
        info.start(QStringLiteral("pdfinfo"), {out});
        QVERIFY2(info.waitForFinished(30000) && info.exitCode() == 0, "pdfinfo (poppler-utils) could not read the PDF");
        const QByteArray pages = info.readAllStandardOutput();
        QVERIFY2(QRegularExpression(QStringLiteral("Pages:\\s+[1-9]")).match(QString::fromUtf8(pages)).hasMatch(),
                 pages.constData());
        QProcess text;
        text.start(QStringLiteral("pdftotext"), {out, QStringLiteral("-")});
        QVERIFY(text.waitForFinished(30000) && text.exitCode() == 0);
        const DocumentPtr document = loadDocument(kSample);
        const auto &peak = document->summary.peak.devices[*document->summary.peak.primary];
        QVERIFY(text.readAllStandardOutput().contains(QByteArray::fromStdString(formatBytes(peak.allocatedBytes))));
    }

    void exportFromTheWindow()
    {
        MainWindow window;
        QVERIFY(load(window, kSample));
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("report.html"));
        QSignalSpy exported(&window, &MainWindow::reportExported);
        window.exportReportTo(out);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.front().at(1).toString().isEmpty(), qPrintable(exported.front().at(1).toString()));
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("PeakLens memory report"));
        window.exportReportTo(QStringLiteral("/nonexistent/report.pdf"));
        QVERIFY(exported.wait(60000));
        QVERIFY(exported.last().at(1).toString().contains(QStringLiteral("/nonexistent/report.pdf")));
    }

    // Headless or from the window, a report is never written onto a trace that is open.
    void exportNeverWritesOntoAnInput()
    {
        QTemporaryDir directory;
        const QString trace = directory.filePath(QStringLiteral("trace.html"));
        QVERIFY(QFile::copy(kSample, trace));
        const QByteArray original = [&] {
            QFile file(trace);
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        }();
        const auto run = test::runTool(QStringLiteral("peaklens"), {QStringLiteral("--export-report"), trace, trace});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("is one of the inputs"), run.err.constData());

        MainWindow window;
        QVERIFY(load(window, trace));
        QSignalSpy exported(&window, &MainWindow::reportExported);
        window.exportReportTo(trace);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.front().at(1).toString().contains(QStringLiteral("is one of the inputs")),
                 qPrintable(exported.front().at(1).toString()));
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), original);
    }

    void screenshotOfAMissingFileFails()
    {
        QTemporaryDir directory;
        const auto run = test::runTool(QStringLiteral("peaklens"),
                                       {QStringLiteral("--screenshot"), directory.filePath(QStringLiteral("x.png")),
                                        QStringLiteral("/nonexistent/trace.peaklens")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains("/nonexistent/trace.peaklens"));
    }
};

QTEST_MAIN(tst_MainWindow)
#include "tst_mainwindow.moc"
