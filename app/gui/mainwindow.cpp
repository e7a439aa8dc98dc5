// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"
#include "showsdialogs.h"

#include "layereditor.h"
#include "livecontroller.h"
#include "livefollow.h"
#include "localpath.h"
#include "models/layermodel.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "replayprocess.h"
#include "reportexport.h"
#include "runscontroller.h"
#include "whatifcontroller.h"
#include "widgets/allocatorpane.h"
#include "widgets/blockpane.h"
#include "widgets/diffpane.h"
#include "widgets/emptystate.h"
#include "widgets/flamegraphpane.h"
#include "widgets/keptpane.h"
#include "widgets/layerspane.h"
#include "widgets/livesetpane.h"
#include "widgets/paretopane.h"
#include "widgets/rankspane.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"
#include "windowsettings.h"

#include "core/analysis/allocatorstate.h"
#include "core/analysis/levelofdetail.h"
#include "core/analysis/tracediff.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>

#include <filesystem>

namespace peaklens::gui {

namespace {

constexpr DocumentLoader::Purpose kPurposes[] = {DocumentLoader::Purpose::Open, DocumentLoader::Purpose::Process,
                                                 DocumentLoader::Purpose::Run, DocumentLoader::Purpose::KeptRun,
                                                 DocumentLoader::Purpose::Compare};

QString bytesText(std::int64_t bytes)
{
    return QString::fromStdString(formatBytes(bytes));
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_loader(new DocumentLoader(this))
    , m_layers(new LayerModel(this))
    , m_live(new LiveController(statusBar(), this))
    , m_actions(addMenus(*this))
    , m_panes(this, m_layers, m_actions.open, m_actions.record, m_actions.rerun)
    , m_toggles(new WhatIfController(m_layers, m_panes.whatIf, this))
    , m_layerEditor(new LayerEditor(this))
    , m_runs(new RunsController(m_loader, m_panes.runs, m_toggles, m_panes.timeline, statusBar(), this))
    , m_report(new ReportWriter(this))
{
    setWindowTitle(tr("PeakLens"));
    setAcceptDrops(true);
    statusBar()->insertPermanentWidget(0, m_live->badge());
    statusBar()->insertPermanentWidget(1, m_live->headroomButton());
    connectPanes();
    connectServices();
    setIdle();
    resize(1400, 900);
    restoreWindowState(*this);
}

MainWindow::~MainWindow()
{
    // The children stop before the panes they would report to go away: a rerun or a
    // recording still running is stopped without a word, loads are cancelled.
    delete m_runs;
    if (m_recordDialog) {
        m_recordDialog->disconnect(this);
        delete m_recordDialog;
    }
    m_loader->disconnect(this);
    delete m_loader;
}

void MainWindow::connectPanes()
{
    connect(m_panes.processSelector, &QComboBox::activated, this, &MainWindow::showProcess);
    connect(m_panes.ranks, &RanksPane::rankChosen, this, &MainWindow::showProcess);
    connect(m_panes.diff, &DiffPane::closeRequested, this, &MainWindow::closeComparison);
    connect(m_panes.diff, &DiffPane::groupingChosen, this, [this] {
        if (document() && m_compared)
            m_panes.diff->showGroupRows(diffTraces(*document()->trace, document()->summary, *m_compared->trace,
                                                   m_compared->summary, m_panes.diff->grouping())
                                            .byGroup);
    });
    connect(m_panes.cancel, &QPushButton::clicked, this, &MainWindow::cancel);
    connect(m_panes.allocator, &AllocatorPane::largestFreeReady, this,
            [this](const DocumentPtr &from, const std::vector<SeriesPoint> &curve) {
                if (from == document())
                    m_panes.timeline->setLargestFree(curve);
            });
    connect(m_panes.timeline, &TimelineView::timeClicked, this, [this](std::int64_t timeNs) { showLiveSet(timeNs); });
    connect(m_panes.timeline, &TimelineView::rangeSelected, this, &MainWindow::showRangeStats);
    connect(m_panes.timeline, &TimelineView::blockClicked, this, [this](std::optional<std::size_t> block) {
        pinBlock(block);
        if (block)
            m_panes.details->setCurrentWidget(m_panes.block);
    });
    connect(m_panes.flame, &FlameGraphPane::selectionChanged, this,
            [this](const std::optional<FlameSelection> &selection, const QString &name) {
                if (selection)
                    statusBar()->showMessage(tr("Drawing the %1…").arg(name));
            });
    connect(m_panes.flame, &FlameGraphPane::selectionMemory, this,
            [this](const std::vector<SeriesPoint> &curve, const QString &name) {
                m_panes.timeline->showSelection(curve, name);
                if (!curve.empty())
                    statusBar()->showMessage(tr("Drawn: the %1.").arg(name), 5000);
            });
    connect(m_panes.layers, &LayersPane::menuRequested, this, [this](std::uint32_t layer, const QPoint &where) {
        if (document() && !m_layerEditor->isBusy())
            m_layerEditor->menuFor(document(), layer, this)->popup(where);
    });
    connect(m_panes.runs, &RunsPane::openRequested, this,
            [this](int row) { openFile(m_panes.runs->runs()->run(row).tracePaths.value(0)); });
}

void MainWindow::connectServices()
{
    connect(m_loader, &DocumentLoader::progress, this, [this](DocumentLoader::Purpose, double fraction) {
        if (m_panes.progress->maximum() > 0) // not over a relaunched command's
            m_panes.showProgress(fraction);
    });
    connect(m_loader, &DocumentLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &DocumentLoader::failed, this, &MainWindow::onLoadFailed);
    connect(m_loader, &DocumentLoader::overviewRead, this, &MainWindow::onOverviewRead);
    connect(m_runs->replay(), &ReplayProcess::progress, this, [this](int step, int steps) {
        if (steps == 0) { // a relaunched command: no step count, only that it runs
            m_panes.showProgress(std::nullopt);
            statusBar()->showMessage(tr("Rerunning: the recorded command is running under the collector…"));
            return;
        }
        m_panes.showProgress(double(step) / steps);
        statusBar()->showMessage(tr("Rerunning: step %1 of %2, each beside the baseline's…").arg(step).arg(steps));
    });
    connect(m_runs, &RunsController::busy, this, [this](const QString &message) {
        m_panes.details->setCurrentWidget(m_panes.runs);
        setBusy(message);
        updateRerunAction();
    });
    connect(m_runs, &RunsController::idle, this, &MainWindow::setIdle);
    connect(m_runs, &RunsController::rerunFinished, this, &MainWindow::rerunFinished);
    connect(m_runs, &RunsController::rerunGrown, this, &MainWindow::liveUpdated);
    connect(m_runs, &RunsController::saved, m_actions.recent, &RecentFiles::remember);
    connect(m_live, &LiveController::grown, this, [this](const DocumentPtr &document) {
        m_session.document = document;
        showDocument(document, true);
        updateRerunAction(); // on the grown document: its chain may have come
        Q_EMIT liveUpdated();
    });
    connect(m_live, &LiveController::changed, this, &MainWindow::updateRerunAction);
    connect(m_live, &LiveController::ended, this, &MainWindow::liveEnded);
    connect(m_live, &LiveController::strategyChosen, this, &MainWindow::setCheckpointStrategy);
    connect(m_toggles, &WhatIfController::predicted, this,
            [this](const std::vector<SeriesPoint> &curve, const QStringList &notes) {
                m_panes.showNotes(notes);
                m_panes.timeline->setPrediction(curve);
                m_panes.kept->showKept(m_toggles->document(), m_toggles->schedule());
                m_panes.pareto->showCurrent(m_toggles->schedule());
            });
    connect(m_panes.pareto, &ParetoPane::planChosen, m_toggles, &WhatIfController::setSchedule);
    connect(m_layerEditor, &LayerEditor::edited, this, [this](const DocumentPtr &document, const QString &what) {
        m_session.document = document;
        showDocument(document);
        statusBar()->showMessage(what, 8000);
        Q_EMIT documentEdited();
    });
    connect(m_report, &ReportWriter::written, this, [this](const QString &path, const QString &problem) {
        statusBar()->showMessage(problem.isEmpty() ? tr("Wrote %1.").arg(path) : problem);
        if (!problem.isEmpty() && showsDialogs())
            QMessageBox::critical(this, tr("Cannot export the report"), problem);
        Q_EMIT reportExported(path, problem);
    });
    connect(m_layerEditor, &LayerEditor::failed, this, [this](const QString &message) {
        if (showsDialogs())
            QMessageBox::warning(this, tr("Cannot change the layers"), message);
        statusBar()->showMessage(message, 8000);
    });
}

void MainWindow::cancel()
{
    for (DocumentLoader::Purpose purpose : kPurposes)
        m_loader->cancel(purpose);
    m_runs->cancel();
}

void MainWindow::rerun()
{
    m_runs->rerun();
}

void MainWindow::setBusy(const QString &message)
{
    m_panes.showProgress(0.0);
    m_panes.showBusy(true);
    statusBar()->showMessage(message);
}

void MainWindow::setIdle()
{
    m_panes.showBusy(m_runs->replay()->isRunning()
                     || std::any_of(std::begin(kPurposes), std::end(kPurposes),
                                    [this](DocumentLoader::Purpose purpose) { return m_loader->isLoading(purpose); }));
    m_panes.showTracePage(document() != nullptr);
    updateRerunAction();
}

void MainWindow::openFile(const QString &path)
{
    openFiles({path});
}

void MainWindow::loadWindowFrom(std::int64_t fromNs)
{
    if (!isWindow())
        return;
    const QString path = document()->filePath();
    m_tickets.open = m_loader->load({path}, DocumentLoader::Purpose::Open, fromNs);
    m_tickets.openRequest = {path};
    m_overview.reset();
    setBusy(tr("Reading %1 from %2 ms in full detail…")
                .arg(path)
                .arg(static_cast<double>(fromNs - m_panes.timeline->originNs()) / 1e6, 0, 'f', 3));
}

bool MainWindow::isWindow() const
{
    return document() && !document()->trace->metaValue(metakey::Window).empty();
}

void MainWindow::openFiles(const QStringList &paths)
{
    if (paths.isEmpty())
        return;
    // An older request is cancelled and its result dropped: nothing waits for it.
    m_tickets.open = m_loader->load(paths, DocumentLoader::Purpose::Open);
    m_tickets.openRequest = paths;
    m_overview.reset();
    setBusy(tr("Opening %1…").arg(paths.join(QStringLiteral(", "))));
    m_panes.emptyState->showProblem({});
}

void MainWindow::onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents,
                          const std::vector<ProcessEntry> &processes)
{
    if (purpose == DocumentLoader::Purpose::Compare) {
        if (ticket == m_tickets.compare)
            showComparison(documents.front());
        return;
    }
    if (purpose == DocumentLoader::Purpose::Process) {
        if (ticket != m_tickets.process)
            return;
        m_session.document = documents.front();
        m_session.pickedTime.reset();
        showDocument(m_session.document);
        Q_EMIT documentLoaded();
        return;
    }
    if (purpose == DocumentLoader::Purpose::Run || purpose == DocumentLoader::Purpose::KeptRun)
        return; // the runs controller's
    if (ticket != m_tickets.open)
        return;
    startSession(documents.front(), processes);
    // A window of a big file: the whole run, as its overview showed it, behind the window.
    if (m_overview && documents.size() == 1 && documents.front()->trace->events.size() < m_overview->events)
        m_panes.timeline->showOverview(m_overview->high, m_overview->low, overviewName(*m_overview));
    m_overview.reset();
    // A folder of ranks is remembered as the folder; several files by the first rank.
    m_actions.recent->remember(m_tickets.openRequest.size() == 1 ? m_tickets.openRequest.front() : documents.front()->filePath());
    m_runs->restoreKept();
    if (documents.size() == 1 && documents.front()->trace->metaValue(metakey::WriterState) == "writing")
        m_live->follow(documents.front()->filePath());
    for (const DocumentPtr &document : documents) {
        if (const std::string warning = document->trace->metaValue(metakey::ImportWarnings); !warning.empty())
            statusBar()->showMessage(tr("%1: %2").arg(document->filePath(), QString::fromStdString(warning)));
    }
    setIdle();
    Q_EMIT documentLoaded();
}

void MainWindow::onLoadFailed(quint64 ticket, DocumentLoader::Purpose purpose, const QString &message, bool cancelled)
{
    if (purpose == DocumentLoader::Purpose::Run || purpose == DocumentLoader::Purpose::KeptRun)
        return; // the runs controller's
    const quint64 expected = purpose == DocumentLoader::Purpose::Process   ? m_tickets.process
                             : purpose == DocumentLoader::Purpose::Compare ? m_tickets.compare
                                                                           : m_tickets.open;
    if (ticket != expected)
        return;
    setIdle();
    if (cancelled) {
        if (!document()) {
            m_panes.timeline->setDocument(nullptr);
            m_panes.showTracePage(false);
        }
        statusBar()->showMessage(tr("Opening was cancelled."), 5000);
        Q_EMIT loadFailed(tr("cancelled"));
        return;
    }
    Q_EMIT loadFailed(message);
    if (!document()) {
        m_panes.timeline->setDocument(nullptr); // an overview it showed
        m_panes.showTracePage(false);
        m_panes.emptyState->showProblem(message);
    } else if (showsDialogs())
        QMessageBox::critical(this, tr("Cannot open the trace"), message);
    statusBar()->showMessage(message);
}

QString MainWindow::overviewName(const FileOverview &overview)
{
    return tr("whole file: allocated on %1, lowest to highest per chunk").arg(QString::fromStdString(overview.device.toString()));
}

void MainWindow::onOverviewRead(quint64 ticket, const std::shared_ptr<const FileOverview> &overview)
{
    if (ticket != m_tickets.open)
        return;
    m_overview = overview;
    if (document())
        return; // an open trace stays until the new one is read, the overview behind it
    const QString device = QString::fromStdString(overview->device.toString());
    m_panes.showTracePage(true);
    m_panes.whatIfToolBar->setVisible(false); // nothing to plan yet
    m_panes.timeline->setVisible(true);
    m_panes.timeline->showOverview(overview->high, overview->low, overviewName(*overview));
    m_panes.timeline->replot(QCustomPlot::rpImmediateRefresh);
    statusBar()->showMessage(tr("Peak %1 on %2, from the file's running totals; reading its %3 memory events…")
                                 .arg(QString::fromStdString(formatBytes(overview->peakBytes)), device,
                                      QString::fromStdString(formatCount(static_cast<std::int64_t>(overview->events)))));
    Q_EMIT overviewShown();
}

void MainWindow::startSession(DocumentPtr document, std::vector<ProcessEntry> processes)
{
    m_runs->closeSession();
    m_live->stop();
    m_session = Session{std::move(document), std::move(processes), std::nullopt};
    showDocument(m_session.document);
    m_panes.showProcesses(m_session.processes);
}

void MainWindow::showProcess(int index)
{
    if (index < 0 || index >= int(m_session.processes.size()))
        return;
    m_panes.showCurrentProcess(index);
    const QString path = m_session.processes[std::size_t(index)].path;
    if (document() && document()->filePath() == path)
        return;
    // A rerun belongs to the process it was started from.
    m_runs->closeSession();
    m_tickets.process = m_loader->load({path}, DocumentLoader::Purpose::Process);
    setBusy(tr("Opening %1…").arg(m_session.processes[std::size_t(index)].label));
}

void MainWindow::showDocument(const DocumentPtr &document, bool grown)
{
    const std::string name = std::filesystem::path(document->path).filename().string();
    setWindowTitle(tr("%1 — PeakLens").arg(QString::fromStdString(visibleText(name))));
    const bool hasLayers = !document->trace->layers.empty();
    m_panes.showTracePage(true); // laid out before the columns are fitted to it
    if (grown)
        m_panes.timeline->growDocument(document);
    else
        m_panes.timeline->setDocument(document);
    m_panes.pareto->showDocument(document); // a grown one's plans are found again, the older search dropped
    m_toggles->setDocument(document, grown);
    for (const auto &[action, groupBy] : m_actions.stackBy)
        action->setEnabled(document->hasGrouping(groupBy));
    m_actions.loadWindow->setEnabled(!document->trace->metaValue(metakey::Window).empty());
    setGrouping(grouping());
    m_panes.layers->fitColumns();
    m_panes.live->setDefaultGrouping(hasLayers);
    m_runs->showDocument(document);
    const bool stateOnly = isStateOnly(*document->trace);
    m_panes.timeline->setVisible(!stateOnly);
    if (stateOnly) {
        m_panes.showNotes(stateOnlyNotes(*document));
        showDetail(m_panes.allocator->objectName());
    }
    pinBlock(std::nullopt);
    if (grown) {
        showLiveSet(m_session.pickedTime);
        return; // the status line is the live one
    }
    closeComparison();
    showLiveSet(std::nullopt);
    setIdle();
    statusBar()->showMessage(statusText(*document));
}

void MainWindow::setGrouping(GroupBy groupBy)
{
    if (document() && !document()->hasGrouping(groupBy))
        groupBy = GroupBy::Category;
    for (const auto &[action, by] : m_actions.stackBy)
        action->setChecked(by == groupBy);
    m_panes.timeline->setGrouping(groupBy);
}

GroupBy MainWindow::grouping() const
{
    for (const auto &[action, groupBy] : m_actions.stackBy) {
        if (action->isChecked())
            return groupBy;
    }
    return GroupBy::Category;
}

void MainWindow::compareWith(const QString &path)
{
    if (!document() || path.isEmpty())
        return;
    m_tickets.compare = m_loader->load({path}, DocumentLoader::Purpose::Compare);
    setBusy(tr("Reading %1 to compare…").arg(path));
}

void MainWindow::showComparison(const DocumentPtr &other)
{
    setIdle();
    if (!document())
        return;
    m_compared = other;
    const TraceDiff diff =
        diffTraces(*document()->trace, document()->summary, *other->trace, other->summary, m_panes.diff->grouping());
    const QString nameB = QFileInfo(other->filePath()).fileName();
    m_panes.diff->showDiff(diff, QFileInfo(document()->filePath()).fileName(), nameB);
    m_panes.diff->showGroupRows(diff.byGroup);
    m_panes.setTabShown(m_panes.diff, tr("Co&mpare"), true);
    m_panes.details->setCurrentWidget(m_panes.diff);
    m_panes.timeline->setComparison(diff.curves ? diff.curves->b : std::vector<SeriesPoint>{}, tr("B: %1").arg(nameB));
    statusBar()->showMessage(
        tr("Compared with %1: peak %2 → %3.").arg(nameB, bytesText(diff.a.peakBytes), bytesText(diff.b.peakBytes)));
    Q_EMIT comparisonShown();
}

void MainWindow::closeComparison()
{
    m_compared.reset();
    m_panes.setTabShown(m_panes.diff, {}, false);
    m_panes.timeline->setComparison({}, {});
}

void MainWindow::pickTime(std::optional<std::int64_t> timeNs, std::optional<std::int64_t> heightBytes)
{
    showLiveSet(timeNs);
    if (timeNs && heightBytes)
        pinBlock(m_panes.timeline->blockAt(*timeNs, *heightBytes));
}

void MainWindow::pinBlock(std::optional<std::size_t> block)
{
    m_panes.timeline->setPinnedBlock(block);
    m_panes.block->showBlock(document(), block, m_panes.timeline->originNs());
}

void MainWindow::showLiveSet(std::optional<std::int64_t> timeNs)
{
    m_session.pickedTime = timeNs;
    m_panes.timeline->setMarkedTime(timeNs);
    m_panes.live->showLiveSet(document(), timeNs);
    m_panes.flame->showAt(document(), timeNs);
    m_panes.allocator->showAt(document(), timeNs);
}

void MainWindow::selectLayer(const QString &path)
{
    if (!document())
        return;
    if (const auto layer = document()->trace->findLayer(path.toStdString()))
        m_panes.layers->selectLayer(*layer);
}

void MainWindow::showRangeStats(std::int64_t beginNs, std::int64_t endNs)
{
    if (!document())
        return;
    const SpanStats stats = spanStats(*document()->trace, document()->byCategory, beginNs, endNs, &document()->allocatedBlocks);
    const QString text = tr("%1 ms: highest %2, lowest %3\n%4 allocated, %5 freed")
                             .arg(static_cast<double>(endNs - beginNs) / 1e6, 0, 'f', 3)
                             .arg(bytesText(stats.highestBytes), bytesText(stats.lowestBytes), bytesText(stats.allocatedBytes),
                                  bytesText(stats.freedBytes));
    m_panes.timeline->showMeasurement(beginNs, endNs, text);
    statusBar()->showMessage(tr("Selected ") + QString(text).replace(QLatin1Char('\n'), QStringLiteral(", ")));
}

void MainWindow::exportReportTo(const QString &path)
{
    if (!document() || m_report->isWriting())
        return;
    std::vector<std::string> open;
    for (const ProcessEntry &process : m_session.processes)
        open.push_back(localPath(process.path));
    statusBar()->showMessage(tr("Writing %1…").arg(path));
    m_report->write(path, document(), m_panes.runs->runs()->runs(), std::move(open));
}

RecordDialog *MainWindow::recordDialog()
{
    if (!m_recordDialog) {
        m_recordDialog = new RecordDialog(this);
        connect(m_recordDialog, &RecordDialog::started, this, &MainWindow::openFile);
        connect(m_recordDialog, &RecordDialog::recorded, this, [this](const QStringList &traces, const QString &problem) {
            if (!problem.isEmpty())
                statusBar()->showMessage(problem);
            // The one trace followed while it was recorded is open already, to its end.
            if (!(traces.size() == 1 && m_live->following() && m_live->following()->path() == traces.front()))
                openFiles(traces);
        });
    }
    return m_recordDialog;
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!m_runs->keepUnsaved()) {
        event->ignore();
        return;
    }
    saveWindowState(*this);
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    QStringList paths;
    for (const QUrl &url : event->mimeData()->urls()) {
        if (url.isLocalFile())
            paths << url.toLocalFile();
    }
    openFiles(paths);
}

void MainWindow::planShardedRank(int degree, int stage)
{
    const DocumentPtr &current = document();
    if (!current || !current->model)
        return;
    m_layerEditor->shard(current, Sharding{degree, stage, gathersWithCopy(current->model->device)});
}

void MainWindow::askForShardedRank()
{
    if (!document() || !document()->model) {
        statusBar()->showMessage(tr("Open a trace with a checkpointable chain first."), 8000);
        return;
    }
    bool ok = false;
    const int degree = QInputDialog::getInt(this, tr("Plan for one rank of a sharded run"),
                                            tr("Ranks sharding the traced run (FSDP, ZeRO):"), 8, 2, 1 << 20, 1, &ok);
    if (!ok)
        return;
    const QStringList stages{tr("3: parameters, gradients and optimizer state (FSDP, ZeRO-3)"),
                             tr("2: gradients and optimizer state (ZeRO-2)"), tr("1: optimizer state (ZeRO-1)")};
    const QString stage = QInputDialog::getItem(this, tr("Plan for one rank of a sharded run"), tr("What the ranks divide:"),
                                                stages, 0, false, &ok);
    if (ok)
        planShardedRank(degree, 3 - static_cast<int>(stages.indexOf(stage)));
}

void MainWindow::updateRerunAction()
{
    m_runs->describeRerun(m_actions.rerun, m_live->isWriting());
}

void MainWindow::setCheckpointStrategy(const QString &strategy)
{
    if (!document() || !document()->model)
        return;
    m_toggles->setStrategy(CheckpointStrategy::parse(strategy.toStdString()));
}

} // namespace peaklens::gui
