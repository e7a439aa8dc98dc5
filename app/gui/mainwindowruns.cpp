// SPDX-License-Identifier: GPL-3.0-or-later
// The main window's what-if and reruns: the toggles and strategies, their prediction, the
// rerun of the step and the runs it adds beside the baseline.

#include "livecontroller.h"
#include "mainwindow.h"
#include "models/layermodel.h"
#include "models/runsmodel.h"
#include "replayprocess.h"
#include "runstore.h"
#include "showsdialogs.h"
#include "whatifcontroller.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/analysis/stepalignment.h"
#include "core/error.h"
#include "core/plan/planner.h"
#include "core/plan/plannotes.h"
#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>

#include <algorithm>

namespace peaklens::gui {

RunRecord MainWindow::baselineRun(const TraceDocument &document) const
{
    // The trace itself is the first run, what the reruns are compared with: the model
    // predicts it without further toggles.
    ReplayResult measured;
    // A trace peaklens-replay wrote carries what it measured: the allocator's own peak (a
    // damaged record leaves the trace's).
    measured.peakAllocatedBytes = document.peakBytes;
    if (const std::string result = document.trace->metaValue(metakey::ReplayResult); !result.empty()) {
        try {
            measured.peakAllocatedBytes =
                ReplayResult::fromJson(result, document.path).peakAllocatedBytes.value_or(document.peakBytes);
        } catch (const Error &) {
        }
    }
    measured.stepTimesMs = document.stepTimesMs();
    RunRecord record;
    record.label = tr("baseline");
    record.baseline = true;
    record.row = rerunRow(*document.model, CheckpointStrategy(), std::move(measured));
    // Shown with the toggles it was recorded with (the model holds them already); a list
    // from a newer writer that does not parse shows none.
    try {
        record.row.strategy = CheckpointStrategy::ofUnitTexts(document.checkpoint);
    } catch (const Error &) {
    }
    record.document = m_session.document;
    return record;
}

void MainWindow::updateRerunAction()
{
    QString reason = document() ? ReplayProcess::unavailableReason(*document()) : tr("no trace is open");
    if (reason.isEmpty() && m_live->isWriting())
        reason = tr("its run is still writing it; stop the run first (Run > Stop the Followed Run)");
    const bool running = isRerunning();
    m_rerunAction->setEnabled(reason.isEmpty() && !running);
    m_rerunAction->setToolTip(running            ? tr("A rerun is running (Esc cancels it)")
                              : reason.isEmpty() ? tr("Run the step again with the checked layers checkpointed, and the "
                                                      "baseline beside it on this machine (Ctrl+R)")
                                                 : tr("Cannot rerun: %1").arg(reason));
    m_rerunAction->setStatusTip(m_rerunAction->toolTip());
}

void MainWindow::rerun()
{
    if (!document() || !document()->model || isRerunning() || !ReplayProcess::unavailableReason(*document()).isEmpty())
        return;
    const CostModel &model = *document()->model;
    RunRecord record;
    record.label = tr("rerun %1").arg(++m_session.rerunCount);
    record.row = rerunRow(model, CheckpointStrategy::of(m_toggles->schedule(), chainPaths(model), chainParts(model)));
    m_rerunSession = m_session.id;
    m_detailTabs->setCurrentWidget(m_runsPane);
    setBusy(tr("Rerunning with %1 checkpointed…")
                .arg(record.checkpoint().isEmpty() ? tr("nothing") : record.checkpoint().join(QStringLiteral(", "))));
    m_rerunLabel = record.label;
    m_replay->start(*document(), record);
    updateRerunAction();
}

void MainWindow::onRerunFinished(RunRecord record)
{
    m_rerunLive.reset();
    if (m_rerunSession != m_session.id) { // the trace it belonged to is closed
        setIdle();
        return;
    }
    if (!record.tracePaths.isEmpty() && !record.cancelled()) {
        const quint64 ticket = m_loader->load(record.tracePaths, DocumentLoader::Purpose::Run);
        m_readingRuns.emplace(ticket, std::move(record));
        statusBar()->showMessage(tr("Reading the rerun's trace…"));
        updateRerunAction();
        return;
    }
    addRun(record);
}

void MainWindow::addRun(const RunRecord &record)
{
    if (record.kept && !record.cancelled()) {
        try {
            saveRun(record);
            rememberRecent(document()->filePath()); // listed with its runs
        } catch (const std::exception &error) {
            statusBar()->showMessage(QString::fromStdString(visibleText(error.what())));
        }
    }
    m_runsPane->append(record);
    statusBar()->showMessage(record.outcome().isEmpty() ? tr("%1 measured.").arg(record.label)
                                                        : tr("%1: %2").arg(record.label, record.outcome()));
    setIdle();
    Q_EMIT rerunFinished();
}

void MainWindow::restoreKeptRuns()
{
    m_runsToRestore.clear();
    if (!document() || !document()->model)
        return;
    QStringList problems;
    for (RunRecord &run : keptRuns(document()->filePath(), &problems)) {
        ++m_session.rerunCount;
        m_runsToRestore.push_back(std::move(run));
    }
    if (!problems.isEmpty())
        statusBar()->showMessage(
            tr("Left out reruns whose run.json cannot be read: %1").arg(problems.join(QStringLiteral(", "))));
    restoreNextRun();
}

void MainWindow::restoreNextRun()
{
    // One at a time: the loader reads one set of run traces at once.
    while (!m_runsToRestore.empty()) {
        RunRecord run = std::move(m_runsToRestore.front());
        m_runsToRestore.pop_front();
        const bool tracesThere = !run.tracePaths.isEmpty()
                                 && std::all_of(run.tracePaths.begin(), run.tracePaths.end(),
                                                [](const QString &path) { return QFileInfo::exists(path); });
        if (!tracesThere || run.cancelled()) {
            m_runsPane->append(run);
            continue;
        }
        const quint64 ticket = m_loader->load(run.tracePaths, DocumentLoader::Purpose::KeptRun);
        m_restoring.emplace(ticket, std::move(run));
        return;
    }
    setIdle();
}

bool MainWindow::keepUnsavedRuns()
{
    std::vector<int> unsaved;
    for (int row = 0; row < runsModel()->rowCount(); ++row) {
        const RunRecord &run = runsModel()->run(row);
        if (!run.baseline && !run.kept && !run.tracePaths.isEmpty())
            unsaved.push_back(row);
    }
    if (unsaved.empty() || !showsDialogs())
        return true;
    const auto answer = QMessageBox::question(
        this, tr("Keep the reruns?"),
        tr("%n rerun(s) could not be kept beside the trace and are in a temporary folder, which is deleted on quitting.", nullptr,
           int(unsaved.size())),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    return answer == QMessageBox::Discard || saveRunsElsewhere(unsaved);
}

bool MainWindow::saveRunsElsewhere(const std::vector<int> &rows)
{
    const QString parent = QFileDialog::getExistingDirectory(this, tr("Save the reruns in"));
    if (parent.isEmpty())
        return false;
    for (const int row : rows) {
        RunRecord run = runsModel()->run(row);
        try {
            saveRunTo(run, parent);
        } catch (const std::exception &error) {
            QMessageBox::critical(this, tr("Cannot save the rerun"), QString::fromStdString(visibleText(error.what())));
            return false;
        }
        runsModel()->replace(row, run);
        statusBar()->showMessage(tr("%1 saved in %2.").arg(run.label, run.folder));
    }
    return true;
}

void MainWindow::showRun(int row)
{
    if (row < 0 || row >= runsModel()->rowCount() || !document() || !document()->model) {
        m_timeline->setComparison({}, {});
        return;
    }
    const RunRecord &run = runsModel()->run(row);
    const CostModel &model = *document()->model;
    // Its toggles and their prediction come back, so the curves on the chart belong together.
    try {
        m_toggles->setStrategy(run.baseline ? CheckpointStrategy() : run.row.strategy);
    } catch (const Error &) {
        // Toggles the chain no longer has (after a change of chain): the prediction stays.
    }
    std::vector<SeriesPoint> curve;
    if (run.document && !run.baseline) {
        if (const auto alignment = alignSteps(*run.document->trace, *document()->trace, model.step)) {
            for (const SeriesPoint &point : alignedSeries(run.document->byCategory.allocated, *alignment))
                curve.push_back({point.timeNs, point.bytes});
        }
    }
    m_timeline->setComparison(curve, tr("measured (%1)").arg(run.label));
}

void MainWindow::setCheckpointStrategy(const QString &strategy)
{
    if (!document() || !document()->model)
        return;
    m_toggles->setStrategy(CheckpointStrategy::parse(strategy.toStdString()));
}

void MainWindow::followRerun(const QString &path)
{
    m_rerunLive = std::make_unique<LiveFollow>(path);
    const quint64 session = m_session.id;
    connect(m_rerunLive.get(), &LiveFollow::documentReady, this,
            [this, session](const DocumentPtr &run, const LiveStatus &status) {
                if (session != m_session.id || !document() || !document()->model || !isRerunning())
                    return;
                // The steps measured so far, laid over the baseline's as the finished run will be.
                std::vector<SeriesPoint> curve;
                if (const auto alignment = alignSteps(*run->trace, *document()->trace, document()->model->step))
                    for (const SeriesPoint &point : alignedSeries(run->byCategory.allocated, *alignment))
                        curve.push_back({point.timeNs, point.bytes});
                m_timeline->setComparison(curve, tr("measured (%1, live)").arg(m_rerunLabel));
                statusBar()->showMessage(tr("%1 — %2").arg(m_rerunLabel, status.text()));
                Q_EMIT liveUpdated();
            });
}

} // namespace peaklens::gui
