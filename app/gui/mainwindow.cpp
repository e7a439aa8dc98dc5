// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"
#include "showsdialogs.h"

#include "layereditor.h"
#include "livecontroller.h"
#include "localpath.h"
#include "models/layermodel.h"
#include "models/livesetmodel.h"
#include "models/runcomparisonmodel.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "replayprocess.h"
#include "reportexport.h"
#include "runscontroller.h"
#include "runstore.h"
#include "whatifcontroller.h"
#include "widgets/allocatorpane.h"
#include "widgets/blockpane.h"
#include "widgets/diffpane.h"
#include "widgets/emptystate.h"
#include "widgets/flamegraphpane.h"
#include "widgets/livesetpane.h"
#include "widgets/rankspane.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/analysis/allocatorstate.h"
#include "core/analysis/levelofdetail.h"
#include "core/analysis/stepalignment.h"
#include "core/analysis/tracediff.h"
#include "core/error.h"
#include "core/plan/planner.h"
#include "core/plan/rerunlaunch.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

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
    , m_pages(new QStackedWidget(this))
    , m_timeline(new TimelineView(this))
    , m_whatIf(new WhatIfBar(this))
    , m_layers(new LayerModel(this))
    , m_toggles(new WhatIfController(m_layers, m_whatIf, this))
    , m_layerProxy(new QSortFilterProxyModel(this))
    , m_livePane(new LiveSetPane(this))
    , m_blockPane(new BlockPane(this))
    , m_flamePane(new FlameGraphPane(this))
    , m_ranksPane(new RanksPane(this))
    , m_diffPane(new DiffPane(this))
    , m_allocatorPane(new AllocatorPane(this))
    , m_layerEditor(new LayerEditor(this))
    , m_progress(new QProgressBar(this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_detailTabs(new QTabWidget(this))
    , m_runsPane(new RunsPane(this))
    , m_loader(new DocumentLoader(this))
    , m_processSelector(new QComboBox(this))
    , m_live(new LiveController(statusBar(), this))
    , m_runs(new RunsController(m_loader, m_runsPane, m_toggles, m_timeline, statusBar(), this))
{
    setWindowTitle(tr("PeakLens"));
    setAcceptDrops(true);
    createActions();
    createPanes();
    connectServices();
    setIdle();
    resize(1400, 900);
    restoreWindowState();
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

void MainWindow::createPanes()
{
    m_layerProxy->setSourceModel(m_layers);
    m_layerProxy->setSortRole(LayerModel::SortRole);
    m_layerProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_layerProxy->setFilterKeyColumn(LayerModel::NameColumn);
    m_layerProxy->setRecursiveFilteringEnabled(true); // a match keeps its enclosing modules
    m_layerView = new QTreeView(this);
    m_layerView->setModel(m_layerProxy);
    m_layerView->setSortingEnabled(true);
    m_layerView->setAlternatingRowColors(true);
    m_layerView->setUniformRowHeights(true);
    m_layerView->header()->setStretchLastSection(false);
    m_layerView->sortByColumn(LayerModel::NameColumn, Qt::AscendingOrder);
    m_layerView->setTreePosition(LayerModel::NameColumn); // the checkbox column comes first
    m_layerFilter = new QLineEdit(this);
    m_layerFilter->setPlaceholderText(tr("Filter layers (Ctrl+F)"));
    m_layerFilter->setClearButtonEnabled(true);
    connect(m_layerFilter, &QLineEdit::textChanged, m_layerProxy, &QSortFilterProxyModel::setFilterFixedString);

    auto *layersPane = new QWidget(this);
    auto *layersLayout = new QVBoxLayout(layersPane);
    layersLayout->setContentsMargins(0, 0, 0, 0);
    layersLayout->addWidget(m_layerFilter);
    layersLayout->addWidget(m_layerView);
    m_detailTabs->addTab(m_livePane, tr("&Live memory"));
    m_livePane->setObjectName(QStringLiteral("live"));
    m_flamePane->setObjectName(QStringLiteral("flame"));
    m_blockPane->setObjectName(QStringLiteral("block"));
    m_runsPane->setObjectName(QStringLiteral("runs"));
    m_ranksPane->setObjectName(QStringLiteral("ranks"));
    m_ranksPane->hide(); // a tab only while several processes are open
    m_diffPane->setObjectName(QStringLiteral("compare"));
    m_diffPane->hide(); // a tab only while a comparison is shown, never loose in the window
    m_allocatorPane->setObjectName(QStringLiteral("allocator"));
    m_detailTabs->addTab(m_flamePane, tr("&Flame graph"));
    m_detailTabs->addTab(m_blockPane, tr("&Block"));
    m_detailTabs->addTab(m_allocatorPane, tr("&Allocator"));
    m_detailTabs->addTab(m_runsPane, tr("R&uns"));

    auto *bottom = new QSplitter(Qt::Horizontal, this);
    bottom->setObjectName(QStringLiteral("layersAndDetails"));
    bottom->addWidget(layersPane);
    bottom->addWidget(m_detailTabs);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);
    m_notes = new QLabel(this);
    m_notes->setObjectName(QStringLiteral("notes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->setContentsMargins(8, 2, 8, 2);
    m_notes->setVisible(false);
    auto *main = new QSplitter(Qt::Vertical, this);
    main->setObjectName(QStringLiteral("timelineAndBelow"));
    main->addWidget(m_timeline);
    main->addWidget(bottom);
    main->setStretchFactor(0, 3);
    main->setStretchFactor(1, 2);
    main->setSizes({480, 400});
    bottom->setSizes({590, 810});
    m_emptyState = new EmptyState(m_openAction, m_recordAction, this);
    auto *page = new QWidget(this);
    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(0, 0, 0, 0);
    pageLayout->setSpacing(0);
    pageLayout->addWidget(m_notes);
    pageLayout->addWidget(main, 1);
    m_pages->addWidget(m_emptyState);
    m_pages->addWidget(page);
    setCentralWidget(m_pages);

    auto *whatIfToolBar = addToolBar(tr("What-if"));
    whatIfToolBar->setObjectName(QStringLiteral("whatIf"));
    whatIfToolBar->setMovable(false);
    whatIfToolBar->addWidget(m_whatIf);
    m_whatIf->setRerunAction(m_rerunAction);
    auto *processBox = new QWidget(this);
    auto *processLayout = new QHBoxLayout(processBox);
    processLayout->setContentsMargins(8, 0, 8, 0);
    processLayout->addWidget(new QLabel(tr("Process:"), processBox));
    processLayout->addWidget(m_processSelector);
    m_processSelector->setObjectName(QStringLiteral("processSelector"));
    m_processSelector->setToolTip(tr("The traces opened together: one per rank or process of the run"));
    m_processSelectorAction = whatIfToolBar->addWidget(processBox);
    m_processSelectorAction->setVisible(false);
    connect(m_processSelector, &QComboBox::activated, this, &MainWindow::showProcess);
    connect(m_ranksPane, &RanksPane::rankChosen, this, &MainWindow::showProcess);
    connect(m_diffPane, &DiffPane::closeRequested, this, &MainWindow::closeComparison);
    connect(m_allocatorPane, &AllocatorPane::largestFreeReady, this,
            [this](const DocumentPtr &from, const std::vector<SeriesPoint> &curve) {
                if (from == document())
                    m_timeline->setLargestFree(curve);
            });

    m_progress->setMaximumWidth(260);
    statusBar()->addPermanentWidget(m_live->badge());
    statusBar()->addPermanentWidget(m_live->headroomButton());
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, &MainWindow::cancel);
}

void MainWindow::connectServices()
{
    connect(m_loader, &DocumentLoader::progress, this, [this](DocumentLoader::Purpose, double fraction) {
        if (m_progress->maximum() > 0)
            m_progress->setValue(static_cast<int>(fraction * 1000));
    });
    connect(m_loader, &DocumentLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &DocumentLoader::failed, this, &MainWindow::onLoadFailed);
    connect(m_runs->replay(), &ReplayProcess::progress, this, [this](int step, int steps) {
        if (steps == 0) { // a relaunched command: no step count, only that it runs
            m_progress->setRange(0, 0);
            statusBar()->showMessage(tr("Rerunning: the recorded command is running under the collector…"));
            return;
        }
        m_progress->setRange(0, 1000);
        m_progress->setValue(step * 1000 / steps);
        statusBar()->showMessage(tr("Rerunning: step %1 of %2, each beside the baseline's…").arg(step).arg(steps));
    });
    connect(m_runs, &RunsController::busy, this, [this](const QString &message) {
        m_detailTabs->setCurrentWidget(m_runsPane);
        setBusy(message);
        updateRerunAction();
    });
    connect(m_runs, &RunsController::idle, this, &MainWindow::setIdle);
    connect(m_runs, &RunsController::rerunFinished, this, &MainWindow::rerunFinished);
    connect(m_runs, &RunsController::rerunGrown, this, &MainWindow::liveUpdated);
    connect(m_runs, &RunsController::saved, this, &MainWindow::rememberRecent);
    connect(m_runsPane, &RunsPane::openRequested, this, [this](int row) { openFile(runsModel()->run(row).tracePaths.value(0)); });
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
                showNotes(notes);
                m_timeline->setPrediction(curve);
            });
    connect(m_timeline, &TimelineView::timeClicked, this, [this](std::int64_t timeNs) { showLiveSet(timeNs); });
    connect(m_timeline, &TimelineView::rangeSelected, this, &MainWindow::showRangeStats);
    connect(m_timeline, &TimelineView::blockClicked, this, [this](std::optional<std::size_t> block) {
        pinBlock(block);
        if (block)
            m_detailTabs->setCurrentWidget(m_blockPane);
    });
    connect(m_blockPane, &BlockPane::lifetimeRequested, m_timeline, &TimelineView::zoomTo);
    connect(m_flamePane, &FlameGraphPane::selectionChanged, this, &MainWindow::showFlameSelection);
    m_layerView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_layerView, &QWidget::customContextMenuRequested, this, [this](const QPoint &position) {
        const QVariant layer = m_layerProxy->data(m_layerView->indexAt(position), LayerModel::LayerRole);
        if (document() && layer.isValid() && !m_layerEditor->isBusy())
            m_layerEditor->menuFor(document(), layer.toUInt(), this)->popup(m_layerView->viewport()->mapToGlobal(position));
    });
    connect(m_layerEditor, &LayerEditor::edited, this, [this](const DocumentPtr &document, const QString &what) {
        m_session.document = document;
        showDocument(document);
        statusBar()->showMessage(what, 8000);
        Q_EMIT documentEdited();
    });
    connect(m_layerEditor, &LayerEditor::failed, this, [this](const QString &message) {
        if (showsDialogs())
            QMessageBox::warning(this, tr("Cannot change the layers"), message);
        statusBar()->showMessage(message, 8000);
    });
    // A layer the user selected, not the current row the view takes when it gains focus:
    // nothing is highlighted until one is chosen.
    connect(m_layerView->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_layerView->selectionModel()->selectedRows();
        const QVariant layer = rows.isEmpty() ? QVariant() : m_layerProxy->data(rows.front(), LayerModel::LayerRole);
        m_timeline->highlightLayer(layer.isValid() ? std::optional<std::uint32_t>(layer.toUInt()) : std::nullopt);
    });
}

RunsModel *MainWindow::runsModel() const
{
    return m_runsPane->runs();
}

RunComparisonModel *MainWindow::comparisonModel() const
{
    return m_runsPane->comparison();
}

void MainWindow::cancel()
{
    for (DocumentLoader::Purpose purpose : kPurposes)
        m_loader->cancel(purpose);
    m_runs->cancel();
}

bool MainWindow::isRerunning() const
{
    return m_runs->isRerunning();
}

void MainWindow::rerun()
{
    m_runs->rerun();
}

void MainWindow::setBusy(const QString &message)
{
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    statusBar()->showMessage(message);
}

void MainWindow::setIdle()
{
    const bool busy = m_runs->replay()->isRunning()
                      || std::any_of(std::begin(kPurposes), std::end(kPurposes),
                                     [this](DocumentLoader::Purpose purpose) { return m_loader->isLoading(purpose); });
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    m_pages->setCurrentIndex(document() ? 1 : 0);
    findChild<QToolBar *>(QStringLiteral("whatIf"))->setVisible(document() != nullptr); // nothing to plan yet
    updateRerunAction();
}

void MainWindow::openFile(const QString &path)
{
    openFiles({path});
}

void MainWindow::openFiles(const QStringList &paths)
{
    if (paths.isEmpty())
        return;
    // An older request is cancelled and its result dropped: nothing waits for it.
    m_openTicket = m_loader->load(paths, DocumentLoader::Purpose::Open);
    m_openRequest = paths;
    setBusy(tr("Opening %1…").arg(paths.join(QStringLiteral(", "))));
    m_emptyState->showProblem({});
}

void MainWindow::onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents,
                          const std::vector<ProcessEntry> &processes)
{
    if (purpose == DocumentLoader::Purpose::Compare) {
        if (ticket == m_compareTicket)
            showComparison(documents.front());
        return;
    }
    if (purpose == DocumentLoader::Purpose::Process) {
        if (ticket != m_processTicket)
            return;
        m_session.document = documents.front();
        m_session.pickedTime.reset();
        showDocument(m_session.document);
        Q_EMIT documentLoaded();
        return;
    }
    if (purpose == DocumentLoader::Purpose::Run || purpose == DocumentLoader::Purpose::KeptRun)
        return; // the runs controller's
    if (ticket != m_openTicket)
        return;
    startSession(documents.front(), processes);
    // A folder of ranks is remembered as the folder; several files by the first rank.
    rememberRecent(m_openRequest.size() == 1 ? m_openRequest.front() : documents.front()->filePath());
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
    const quint64 expected = purpose == DocumentLoader::Purpose::Process   ? m_processTicket
                             : purpose == DocumentLoader::Purpose::Compare ? m_compareTicket
                                                                           : m_openTicket;
    if (ticket != expected)
        return;
    setIdle();
    if (cancelled) {
        statusBar()->showMessage(tr("Opening was cancelled."), 5000);
        Q_EMIT loadFailed(tr("cancelled"));
        return;
    }
    Q_EMIT loadFailed(message);
    if (!document())
        m_emptyState->showProblem(message);
    else if (showsDialogs())
        QMessageBox::critical(this, tr("Cannot open the trace"), message);
    statusBar()->showMessage(message);
}

void MainWindow::startSession(DocumentPtr document, std::vector<ProcessEntry> processes)
{
    m_runs->closeSession();
    m_live->stop();
    m_session = Session{};
    m_session.id = m_nextSession++;
    m_session.processes = std::move(processes);
    m_processSelector->clear();
    std::vector<RankOverview> overviews;
    for (const ProcessEntry &process : m_session.processes) {
        m_processSelector->addItem(process.label);
        overviews.push_back(process.overview);
    }
    const bool several = m_session.processes.size() > 1;
    m_processSelectorAction->setVisible(several);
    m_ranksPane->setTable(crossRankTable(std::move(overviews)));
    const int ranksTab = m_detailTabs->indexOf(m_ranksPane);
    if (several && ranksTab < 0)
        m_detailTabs->insertTab(0, m_ranksPane, tr("Ran&ks"));
    else if (!several && ranksTab >= 0)
        m_detailTabs->removeTab(ranksTab);
    m_session.document = std::move(document);
    showDocument(m_session.document);
    if (several)
        m_detailTabs->setCurrentWidget(m_ranksPane);
}

void MainWindow::showProcess(int index)
{
    if (index < 0 || index >= int(m_session.processes.size()))
        return;
    if (m_processSelector->currentIndex() != index)
        m_processSelector->setCurrentIndex(index);
    m_ranksPane->setCurrent(index);
    const QString path = m_session.processes[std::size_t(index)].path;
    if (document() && document()->filePath() == path)
        return;
    // A rerun belongs to the process it was started from.
    m_runs->closeSession();
    m_processTicket = m_loader->load({path}, DocumentLoader::Purpose::Process);
    setBusy(tr("Opening %1…").arg(m_session.processes[std::size_t(index)].label));
}

void MainWindow::showDocument(const DocumentPtr &document, bool grown)
{
    m_selectionJobs.drop(); // a flame-graph curve still being drawn belongs to the previous trace
    const std::string name = std::filesystem::path(document->path).filename().string();
    setWindowTitle(tr("%1 — PeakLens").arg(QString::fromStdString(visibleText(name))));
    const bool hasLayers = !document->trace->layers.empty();
    m_pages->setCurrentIndex(1); // laid out before the columns are fitted to it
    if (grown)
        m_timeline->growDocument(document);
    else
        m_timeline->setDocument(document);
    m_toggles->setDocument(document, grown);
    setGroupByLayer(hasLayers && m_byLayerAction->isChecked());
    m_byLayerAction->setEnabled(hasLayers);
    m_layerView->expandAll();
    // Layer names in full (the tree scrolls sideways when they are long); the kind gives way.
    for (int column = 0; column < LayerModel::NumColumns; ++column)
        m_layerView->resizeColumnToContents(column);
    m_layerView->setColumnWidth(LayerModel::NameColumn,
                                std::min(m_layerView->columnWidth(LayerModel::NameColumn), m_layerView->width() * 2 / 5));
    m_livePane->setDefaultGrouping(hasLayers);
    m_runs->showDocument(document);
    const bool stateOnly = isStateOnly(*document->trace);
    m_timeline->setVisible(!stateOnly);
    if (stateOnly) {
        // No timeline to show: the state itself, and what it says of a failure there.
        QStringList notes{QString::fromUtf8(kStateOnlyHeadline.data(), qsizetype(kStateOnlyHeadline.size()))};
        for (const DevicePeak &peak : document->summary.peak.devices)
            notes << QString::fromStdString(judgeDumpState(*document->trace, peak.device).explanation);
        if (document->trace->events.empty() && document->trace->reserved.empty())
            notes << tr("It holds no memory: the process had allocated nothing when the snapshot was taken.");
        showNotes(notes);
        showDetail(m_allocatorPane->objectName());
    }
    pinBlock(std::nullopt);
    if (grown) {
        showLiveSet(m_session.pickedTime);
        return; // the status line is the live one
    }
    m_timeline->setComparison({}, {});
    if (const int compareTab = m_detailTabs->indexOf(m_diffPane); compareTab >= 0)
        m_detailTabs->removeTab(compareTab);
    showLiveSet(std::nullopt);
    setIdle();
    const auto count = [](std::size_t n, const char *noun) {
        return QString::fromStdString(formatCount(static_cast<std::int64_t>(n)) + " " + noun + (n == 1 ? "" : "s"));
    };
    QString status = stateOnly ? QString(count(document->trace->events.size(), "block") + tr(" live at dump time"))
                               : QString(count(document->trace->events.size(), "memory event") + QStringLiteral(", ")
                                         + count(document->trace->layers.size(), "layer") + QStringLiteral(", ")
                                         + count(document->trace->steps.size(), "step"));
    if (document->trace->metaValue(metakey::AllocatorView) == "segments")
        status += tr(" — recorded with PyTorch's caching allocator, which hides tensors: only its segments (reserved "
                     "memory) were seen. Record with the exact or async allocator for per-layer memory.");
    statusBar()->showMessage(status);
}

void MainWindow::setGroupByLayer(bool byLayer)
{
    m_byLayerAction->setChecked(byLayer);
    m_byCategoryAction->setChecked(!byLayer);
    m_timeline->setGrouping(byLayer ? GroupBy::Layer : GroupBy::Category);
}

void MainWindow::followLive(const QString &path)
{
    m_live->follow(path);
}

QString MainWindow::stopFollowedRun()
{
    return m_live->stopRun();
}

LiveFollow *MainWindow::liveFollow() const
{
    return m_live->following();
}

QLabel *MainWindow::liveBadge() const
{
    return m_live->badge();
}

QToolButton *MainWindow::headroomButton() const
{
    return m_live->headroomButton();
}

LiveSetModel *MainWindow::liveSetModel() const
{
    return m_livePane->model();
}

void MainWindow::compareWith(const QString &path)
{
    if (!document() || path.isEmpty())
        return;
    m_compareTicket = m_loader->load({path}, DocumentLoader::Purpose::Compare);
    setBusy(tr("Reading %1 to compare…").arg(path));
}

void MainWindow::showComparison(const DocumentPtr &other)
{
    setIdle();
    if (!document())
        return;
    const TraceDiff diff = diffTraces(*document()->trace, document()->summary, *other->trace, other->summary);
    const QString nameB = QFileInfo(other->filePath()).fileName();
    m_diffPane->showDiff(diff, QFileInfo(document()->filePath()).fileName(), nameB);
    if (m_detailTabs->indexOf(m_diffPane) < 0)
        m_detailTabs->addTab(m_diffPane, tr("Co&mpare"));
    m_detailTabs->setCurrentWidget(m_diffPane);
    std::vector<SeriesPoint> curve;
    if (diff.curves) {
        for (const SeriesPoint &point : diff.curves->b)
            curve.push_back({point.timeNs, point.bytes});
    }
    m_timeline->setComparison(curve, tr("B: %1").arg(nameB));
    statusBar()->showMessage(
        tr("Compared with %1: peak %2 → %3.").arg(nameB, bytesText(diff.a.peakBytes), bytesText(diff.b.peakBytes)));
    Q_EMIT comparisonShown();
}

void MainWindow::showFlameSelection(const std::optional<FlameSelection> &selection, const QString &name)
{
    if (!document() || !selection) {
        m_selectionJobs.drop();
        m_timeline->showSelection({}, {});
        return;
    }
    // A pass over every event of the trace: off the UI thread, the newest request wins.
    statusBar()->showMessage(tr("Drawing the %1…").arg(name));
    m_selectionJobs.start(
        [document = document(), selection = *selection](const Progress &) {
            const Trace &trace = *document->trace;
            return selectedMemory(trace, document->device,
                                  [&](std::size_t event) { return selection.containsEvent(trace, event); });
        },
        [this, name](const std::vector<SeriesPoint> &curve) {
            m_timeline->showSelection(curve, name);
            statusBar()->showMessage(tr("Drawn: the %1.").arg(name), 5000);
        });
}

void MainWindow::closeComparison()
{
    if (const int tab = m_detailTabs->indexOf(m_diffPane); tab >= 0)
        m_detailTabs->removeTab(tab);
    m_timeline->setComparison({}, {});
}

void MainWindow::pickTime(std::optional<std::int64_t> timeNs, std::optional<std::int64_t> heightBytes)
{
    showLiveSet(timeNs);
    if (timeNs && heightBytes)
        pinBlock(m_timeline->blockAt(*timeNs, *heightBytes));
}

void MainWindow::showNotes(const QStringList &sentences)
{
    m_notes->setText(sentences.join(QLatin1Char(' ')));
    m_notes->setVisible(!sentences.isEmpty());
}

void MainWindow::showDetail(const QString &name)
{
    for (int tab = 0; tab < m_detailTabs->count(); ++tab) {
        if (m_detailTabs->widget(tab)->objectName() == name)
            m_detailTabs->setCurrentIndex(tab);
    }
}

void MainWindow::pinBlock(std::optional<std::size_t> block)
{
    m_timeline->setPinnedBlock(block);
    m_blockPane->showBlock(document(), block, m_timeline->originNs());
}

void MainWindow::showLiveSet(std::optional<std::int64_t> timeNs)
{
    m_session.pickedTime = timeNs;
    m_timeline->setMarkedTime(timeNs);
    m_livePane->showLiveSet(document(), timeNs);
    m_flamePane->showAt(document(), timeNs);
    m_allocatorPane->showAt(document(), timeNs);
}

void MainWindow::selectLayer(const QString &path)
{
    if (!document())
        return;
    if (const auto layer = document()->trace->findLayer(path.toStdString()))
        m_layerView->setCurrentIndex(m_layerProxy->mapFromSource(m_layers->indexOfLayer(*layer)));
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
    m_timeline->showMeasurement(beginNs, endNs, text);
    statusBar()->showMessage(tr("Selected ") + QString(text).replace(QLatin1Char('\n'), QStringLiteral(", ")));
}

} // namespace peaklens::gui
