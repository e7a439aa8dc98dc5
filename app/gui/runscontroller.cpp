// SPDX-License-Identifier: GPL-3.0-or-later
#include "runscontroller.h"

#include "livefollow.h"
#include "models/runsmodel.h"
#include "replayprocess.h"
#include "runstore.h"
#include "showsdialogs.h"
#include "whatifcontroller.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"

#include "core/analysis/stepalignment.h"
#include "core/error.h"
#include "core/plan/planner.h"
#include "core/plan/rerunlaunch.h"
#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStatusBar>

#include <algorithm>

namespace peaklens::gui {

namespace {

// A run's measured figures from its traces when it was relaunched: the run's trace and the
// baseline's recorded beside it, and whether their first gradients agree.
void takeMeasuredFrom(RunRecord &record, const std::vector<DocumentPtr> &documents)
{
    record.document = documents.front();
    if (documents.size() == 2) {
        record.row.measured.peakAllocatedBytes = documents[0]->peakBytes;
        record.row.measured.stepTimesMs = documents[0]->stepTimesMs();
        record.row.measured.baseline =
            ReplaySteps{.peakAllocatedBytes = documents[1]->peakBytes, .stepTimesMs = documents[1]->stepTimesMs()};
        if (!record.row.measured.gradients && record.tracePaths.size() == 2)
            record.row.measured.gradients = relaunchedGradients(
                record.tracePaths[1].toStdString(), record.tracePaths[0].toStdString(), gradientTolerance(record.row.schedule));
    }
}

// A run's trace laid over the baseline's step, as the comparison curve draws it.
std::vector<SeriesPoint> alignedCurve(const TraceDocument &run, const TraceDocument &baseline)
{
    std::vector<SeriesPoint> curve;
    if (const auto alignment = alignSteps(*run.trace, *baseline.trace, baseline.model->step)) {
        for (const SeriesPoint &point : alignedSeries(run.byCategory.allocated, *alignment))
            curve.push_back({point.timeNs, point.bytes});
    }
    return curve;
}

} // namespace

RunsController::RunsController(DocumentLoader *loader, RunsPane *pane, WhatIfController *toggles, TimelineView *timeline,
                               QStatusBar *status, QWidget *parent)
    : QObject(parent)
    , m_loader(loader)
    , m_pane(pane)
    , m_toggles(toggles)
    , m_timeline(timeline)
    , m_status(status)
    , m_parent(parent)
    , m_replay(new ReplayProcess(this))
{
    connect(m_replay, &ReplayProcess::finished, this, &RunsController::onRerunFinished);
    connect(m_replay, &ReplayProcess::traceStarted, this, &RunsController::followRerun);
    connect(m_loader, &DocumentLoader::loaded, this,
            [this](quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents,
                   const std::vector<ProcessEntry> &) { onLoaded(ticket, purpose, documents); });
    connect(m_loader, &DocumentLoader::failed, this, &RunsController::onLoadFailed);
    connect(m_pane, &RunsPane::runSelected, this, &RunsController::showRun);
    connect(m_pane, &RunsPane::saveRequested, this, [this](int row) { saveElsewhere({row}); });
}

RunsController::~RunsController()
{
    // The child stops before the panes it would report to go away: a rerun still running
    // is stopped without a word.
    m_replay->disconnect(this);
    delete m_replay;
}

RunsModel *RunsController::model() const
{
    return m_pane->runs();
}

void RunsController::closeSession()
{
    // A rerun of the previous trace would land in the wrong table.
    if (m_replay->isRunning())
        m_replay->cancel();
    m_loader->cancel(DocumentLoader::Purpose::Run);
    m_loader->cancel(DocumentLoader::Purpose::KeptRun);
    m_readingRuns.clear();
    m_restoring.reset();
    m_toRestore.clear();
    m_rerunLive.reset();
    m_rerunCount = 0;
    ++m_session;
}

void RunsController::showDocument(const DocumentPtr &document)
{
    m_document = document;
    if (document && document->model)
        m_pane->reset(document, {baselineRow(document)});
    else
        m_pane->reset(document, {});
}

RunRecord RunsController::baselineRow(const DocumentPtr &document) const
{
    // The trace itself is the first run, what the reruns are compared with: the model
    // predicts it without further toggles.
    ReplayResult measured;
    // A trace peaklens-replay wrote carries what it measured: the allocator's own peak (a
    // damaged record leaves the trace's).
    measured.peakAllocatedBytes = document->peakBytes;
    if (const std::string result = document->trace->metaValue(metakey::ReplayResult); !result.empty()) {
        try {
            measured.peakAllocatedBytes =
                ReplayResult::fromJson(result, document->path).peakAllocatedBytes.value_or(document->peakBytes);
        } catch (const Error &) {
        }
    }
    measured.stepTimesMs = document->stepTimesMs();
    RunRecord record;
    record.label = tr("baseline");
    record.baseline = true;
    record.row = rerunRow(*document->model, CheckpointStrategy(), std::move(measured));
    // Shown with the toggles it was recorded with (the model holds them already); a list
    // from a newer writer that does not parse shows none.
    try {
        record.row.strategy = CheckpointStrategy::ofUnitTexts(document->checkpoint);
    } catch (const Error &) {
    }
    record.document = document;
    return record;
}

bool RunsController::isRerunning() const
{
    return m_replay->isRunning() || !m_readingRuns.empty();
}

void RunsController::describeRerun(QAction *rerun, bool writing) const
{
    QString reason = m_document ? ReplayProcess::unavailableReason(*m_document) : tr("no trace is open");
    if (reason.isEmpty() && writing)
        reason = tr("its run is still writing it; stop the run first (Run > Stop the Followed Run)");
    const bool running = isRerunning();
    rerun->setEnabled(reason.isEmpty() && !running);
    rerun->setToolTip(running            ? tr("A rerun is running (Esc cancels it)")
                      : reason.isEmpty() ? tr("Run the step again with the checked layers checkpointed, and the "
                                              "baseline beside it on this machine (Ctrl+R)")
                                         : tr("Cannot rerun: %1").arg(reason));
    rerun->setStatusTip(rerun->toolTip());
}

void RunsController::cancel()
{
    m_replay->cancel();
}

void RunsController::rerun()
{
    if (!m_document || !m_document->model || isRerunning() || !ReplayProcess::unavailableReason(*m_document).isEmpty())
        return;
    const CostModel &model = *m_document->model;
    RunRecord record;
    record.label = tr("rerun %1").arg(++m_rerunCount);
    record.row = rerunRow(model, CheckpointStrategy::of(m_toggles->schedule(), chainPaths(model), chainParts(model)));
    m_rerunSession = m_session;
    m_rerunLabel = record.label;
    const QString units = record.checkpoint().isEmpty() ? tr("nothing") : record.checkpoint().join(QStringLiteral(", "));
    m_replay->start(*m_document, record);
    Q_EMIT busy(tr("Rerunning with %1 checkpointed…").arg(units));
}

void RunsController::onRerunFinished(RunRecord record)
{
    m_rerunLive.reset();
    if (m_rerunSession != m_session) { // the trace it belonged to is closed
        Q_EMIT idle();
        return;
    }
    if (!record.tracePaths.isEmpty() && !record.cancelled()) {
        const quint64 ticket = m_loader->load(record.tracePaths, DocumentLoader::Purpose::Run);
        m_readingRuns.emplace(ticket, std::move(record));
        m_status->showMessage(tr("Reading the rerun's trace…"));
        return;
    }
    addRun(record);
}

void RunsController::onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents)
{
    if (purpose == DocumentLoader::Purpose::Run) {
        auto pending = m_readingRuns.extract(ticket);
        if (pending.empty())
            return;
        takeMeasuredFrom(pending.mapped(), documents);
        addRun(pending.mapped());
    } else if (purpose == DocumentLoader::Purpose::KeptRun) {
        if (!m_restoring || m_restoring->first != ticket)
            return;
        RunRecord record = std::move(m_restoring->second);
        m_restoring.reset();
        takeMeasuredFrom(record, documents);
        m_pane->append(record);
        restoreNext();
    }
}

void RunsController::onLoadFailed(quint64 ticket, DocumentLoader::Purpose purpose, const QString &message, bool cancelled)
{
    const std::string outcome = (cancelled ? RunRecord::cancelledOutcome() : message).toStdString();
    if (purpose == DocumentLoader::Purpose::Run) {
        auto pending = m_readingRuns.extract(ticket);
        if (pending.empty())
            return;
        pending.mapped().row.outcome = outcome;
        addRun(pending.mapped());
    } else if (purpose == DocumentLoader::Purpose::KeptRun) {
        if (!m_restoring || m_restoring->first != ticket)
            return;
        RunRecord record = std::move(m_restoring->second); // kept as it was; why it cannot be read, in its row
        m_restoring.reset();
        record.row.outcome = outcome;
        m_pane->append(record);
        restoreNext();
    }
}

void RunsController::addRun(const RunRecord &record)
{
    if (record.kept && !record.cancelled()) {
        try {
            saveRun(record);
            Q_EMIT saved(m_document->filePath()); // listed with its runs
        } catch (const std::exception &error) {
            m_status->showMessage(QString::fromStdString(visibleText(error.what())));
        }
    }
    m_pane->append(record);
    m_status->showMessage(record.outcome().isEmpty() ? tr("%1 measured.").arg(record.label)
                                                     : tr("%1: %2").arg(record.label, record.outcome()));
    Q_EMIT idle();
    Q_EMIT rerunFinished();
}

void RunsController::restoreKept()
{
    m_toRestore.clear();
    if (!m_document || !m_document->model)
        return;
    QStringList problems;
    for (RunRecord &run : keptRuns(m_document->filePath(), &problems)) {
        ++m_rerunCount;
        m_toRestore.push_back(std::move(run));
    }
    if (!problems.isEmpty())
        m_status->showMessage(tr("Left out reruns whose run.json cannot be read: %1").arg(problems.join(QStringLiteral(", "))));
    restoreNext();
}

void RunsController::restoreNext()
{
    // One at a time: the loader reads one set of run traces at once.
    while (!m_toRestore.empty()) {
        RunRecord run = std::move(m_toRestore.front());
        m_toRestore.pop_front();
        const bool tracesThere = !run.tracePaths.isEmpty()
                                 && std::all_of(run.tracePaths.begin(), run.tracePaths.end(),
                                                [](const QString &path) { return QFileInfo::exists(path); });
        if (!tracesThere || run.cancelled()) {
            m_pane->append(run);
            continue;
        }
        const quint64 ticket = m_loader->load(run.tracePaths, DocumentLoader::Purpose::KeptRun);
        m_restoring.emplace(ticket, std::move(run));
        return;
    }
    Q_EMIT idle();
}

bool RunsController::keepUnsaved()
{
    std::vector<int> unsaved;
    for (int row = 0; row < model()->rowCount(); ++row) {
        const RunRecord &run = model()->run(row);
        if (!run.baseline && !run.kept && !run.tracePaths.isEmpty())
            unsaved.push_back(row);
    }
    if (unsaved.empty() || !showsDialogs())
        return true;
    const auto answer = QMessageBox::question(
        m_parent, tr("Keep the reruns?"),
        tr("%n rerun(s) could not be kept beside the trace and are in a temporary folder, which is deleted on quitting.", nullptr,
           int(unsaved.size())),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    return answer == QMessageBox::Discard || saveElsewhere(unsaved);
}

bool RunsController::saveElsewhere(const std::vector<int> &rows)
{
    const QString parent = QFileDialog::getExistingDirectory(m_parent, tr("Save the reruns in"));
    if (parent.isEmpty())
        return false;
    for (const int row : rows) {
        RunRecord run = model()->run(row);
        try {
            saveRunTo(run, parent);
        } catch (const std::exception &error) {
            QMessageBox::critical(m_parent, tr("Cannot save the rerun"), QString::fromStdString(visibleText(error.what())));
            return false;
        }
        model()->replace(row, run);
        m_status->showMessage(tr("%1 saved in %2.").arg(run.label, run.folder));
    }
    return true;
}

void RunsController::showRun(int row)
{
    if (row < 0 || row >= model()->rowCount() || !m_document || !m_document->model) {
        m_timeline->setComparison({}, {});
        return;
    }
    const RunRecord &run = model()->run(row);
    // Its toggles and their prediction come back, so the curves on the chart belong together.
    try {
        m_toggles->setStrategy(run.baseline ? CheckpointStrategy() : run.row.strategy);
    } catch (const Error &) {
        // Toggles the chain no longer has (after a change of chain): the prediction stays.
    }
    const bool measured = run.document && !run.baseline;
    m_timeline->setComparison(measured ? alignedCurve(*run.document, *m_document) : std::vector<SeriesPoint>(),
                              tr("measured (%1)").arg(run.label));
}

void RunsController::followRerun(const QString &path)
{
    m_rerunLive = std::make_unique<LiveFollow>(path);
    connect(m_rerunLive.get(), &LiveFollow::documentReady, this, [this](const DocumentPtr &run, const LiveStatus &status) {
        if (m_rerunSession != m_session || !m_document || !m_document->model || !isRerunning())
            return;
        // The steps measured so far, laid over the baseline's as the finished run will be.
        m_timeline->setComparison(alignedCurve(*run, *m_document), tr("measured (%1, live)").arg(m_rerunLabel));
        m_status->showMessage(tr("%1 — %2").arg(m_rerunLabel, status.text()));
        Q_EMIT rerunGrown();
    });
}

} // namespace peaklens::gui
