#include "mainwindow.h"

#include "layereditor.h"
#include "localpath.h"
#include "models/layermodel.h"
#include "models/livesetmodel.h"
#include "models/runcomparisonmodel.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "replayprocess.h"
#include "reportexport.h"
#include "widgets/emptystate.h"
#include "widgets/livesetpane.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/analysis/levelofdetail.h"
#include "core/analysis/stepalignment.h"
#include "core/error.h"
#include "core/plan/planner.h"
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
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <filesystem>

namespace peaklens::gui {

namespace {

constexpr int kMaxRecent = 10;

// "rank 1 (pid 4242)" for a recorded process, else the file's name.
QString processLabel(const TraceDocument &document)
{
    const QString rank = QString::fromStdString(document.trace->metaValue(metakey::Rank));
    const QString pid = QString::fromStdString(document.trace->metaValue(metakey::ProcessId));
    if (!rank.isEmpty())
        return pid.isEmpty() ? MainWindow::tr("rank %1").arg(rank) : MainWindow::tr("rank %1 (pid %2)").arg(rank, pid);
    if (!pid.isEmpty())
        return MainWindow::tr("pid %1").arg(pid);
    return QFileInfo(document.filePath()).fileName();
}

QString bytesText(std::int64_t bytes)
{
    return QString::fromStdString(formatBytes(bytes));
}

bool showsDialogs()
{
    return QApplication::platformName() != QLatin1String("offscreen");
}

// Why there is no what-if, in the app's own terms rather than the command line's.
QString noModelText(const TraceDocument &document)
{
    if (document.trace->layers.empty())
        return MainWindow::tr("the trace names no layers, so there is nothing to checkpoint");
    QString reason = QString::fromStdString(visibleText(document.modelProblem));
    const qsizetype hint = reason.indexOf(QLatin1String("; choose the chain"));
    if (hint >= 0)
        reason = reason.left(hint) + MainWindow::tr(". Right-click the layer that holds the blocks and choose "
                                                    "\u201cPlan with its sub-layers as the chain\u201d.");
    return reason;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_pages(new QStackedWidget(this))
    , m_timeline(new TimelineView(this))
    , m_whatIf(new WhatIfBar(this))
    , m_layers(new LayerModel(this))
    , m_layerProxy(new QSortFilterProxyModel(this))
    , m_livePane(new LiveSetPane(this))
    , m_layerEditor(new LayerEditor(this))
    , m_progress(new QProgressBar(this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_detailTabs(new QTabWidget(this))
    , m_runsPane(new RunsPane(this))
    , m_loader(new DocumentLoader(this))
    , m_replay(new ReplayProcess(this))
    , m_processSelector(new QComboBox(this))
{
    setWindowTitle(tr("PeakLens"));
    setAcceptDrops(true);
    createActions();
    createPanes();
    connectServices();
    setIdle();
    resize(1400, 900);
}

MainWindow::~MainWindow()
{
    // The children stop before the panes they would report to go away: a rerun or a
    // recording still running is stopped without a word, loads are cancelled.
    m_replay->disconnect(this);
    delete m_replay;
    if (m_recordDialog) {
        m_recordDialog->disconnect(this);
        delete m_recordDialog;
    }
    m_loader->disconnect(this);
    delete m_loader;
    m_exporter.waitForFinished();
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
    m_detailTabs->addTab(m_runsPane, tr("R&uns"));

    auto *bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(layersPane);
    bottom->addWidget(m_detailTabs);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);
    auto *main = new QSplitter(Qt::Vertical, this);
    main->addWidget(m_timeline);
    main->addWidget(bottom);
    main->setStretchFactor(0, 3);
    main->setStretchFactor(1, 2);
    main->setSizes({480, 400});
    bottom->setSizes({590, 810});
    m_emptyState = new EmptyState(m_openAction, m_recordAction, this);
    m_pages->addWidget(m_emptyState);
    m_pages->addWidget(main);
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

    m_progress->setMaximumWidth(260);
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
    connect(m_replay, &ReplayProcess::progress, this, [this](int step, int steps) {
        if (steps == 0) { // a relaunched command: no step count, only that it runs
            m_progress->setRange(0, 0);
            statusBar()->showMessage(tr("Rerunning: the recorded command is running under the collector…"));
            return;
        }
        m_progress->setRange(0, 1000);
        m_progress->setValue(step * 1000 / steps);
        statusBar()->showMessage(tr("Rerunning: step %1 of %2, each beside the baseline's…").arg(step).arg(steps));
    });
    connect(m_replay, &ReplayProcess::finished, this, &MainWindow::onRerunFinished);
    connect(m_runsPane, &RunsPane::runSelected, this, &MainWindow::showRun);
    connect(m_layers, &LayerModel::checkpointChanged, this, [this] {
        m_whatIf->markCustom();
        m_session.schedule = m_layers->schedule();
        updatePrediction();
    });
    connect(m_whatIf, &WhatIfBar::strategyChanged, this, &MainWindow::applyStrategy);
    connect(m_timeline, &TimelineView::timeClicked, this, [this](std::int64_t timeNs) { showLiveSet(timeNs); });
    connect(m_timeline, &TimelineView::rangeSelected, this, &MainWindow::showRangeStats);
    m_layerView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_layerView, &QWidget::customContextMenuRequested, this, [this](const QPoint &position) {
        const QVariant layer = m_layerProxy->data(m_layerView->indexAt(position), LayerModel::LayerRole);
        if (document() && layer.isValid() && !m_layerEditor->isBusy())
            m_layerEditor->menuFor(document(), layer.toUInt(), this)->popup(m_layerView->viewport()->mapToGlobal(position));
    });
    connect(m_layerEditor, &LayerEditor::edited, this, [this](const DocumentPtr &document, const QString &what) {
        std::replace(m_session.processes.begin(), m_session.processes.end(), m_session.document, document);
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
    connect(m_layerView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        const QVariant layer = m_layerProxy->data(current, LayerModel::LayerRole);
        m_timeline->highlightLayer(layer.isValid() ? std::optional<std::uint32_t>(layer.toUInt()) : std::nullopt);
    });
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(tr("&Open…"), this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(
            this, tr("Open traces (several: one per rank)"), QString(),
            tr("Traces (*.peaklens *.pltxt *.pickle *.json *.gz);;All files (*)"));
        openFiles(paths);
    });
    m_openAction->setShortcut(QKeySequence::Open);
    m_openAction->setToolTip(tr("Open a trace, a PyTorch memory snapshot or a Kineto trace (Ctrl+O)"));
    m_recordAction = file->addAction(tr("Re&cord…"), this, [this] { recordDialog()->show(); });
    m_recordAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_recordAction->setToolTip(tr("Run a training command under the CUPTI collector and open its traces"));
    m_recordAction->setStatusTip(m_recordAction->toolTip());
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    QAction *reload = file->addAction(tr("Re&load"), this, [this] {
        QStringList paths;
        for (const DocumentPtr &document : m_session.processes)
            paths << document->filePath();
        openFiles(paths);
    });
    reload->setShortcut(QKeySequence::Refresh);
    QAction *exportReport = file->addAction(tr("&Export report…"), this, [this] {
        if (!document())
            return;
        const QString suggested = QFileInfo(document()->filePath()).completeBaseName() + QStringLiteral("-report.pdf");
        const QString path = QFileDialog::getSaveFileName(this, tr("Export report"), suggested,
                                                          tr("PDF (*.pdf);;HTML (*.html);;CSV (*.csv);;JSON (*.json)"));
        if (!path.isEmpty())
            exportReportTo(path);
    });
    exportReport->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)->setShortcut(QKeySequence::Quit);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    m_byCategoryAction = view->addAction(tr("Stack by &category"), this, [this] { setGroupByLayer(false); });
    m_byCategoryAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    m_byLayerAction = view->addAction(tr("Stack by &layer"), this, [this] { setGroupByLayer(true); });
    m_byLayerAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
    for (QAction *action : {m_byCategoryAction, m_byLayerAction})
        action->setCheckable(true);
    view->addSeparator();
    view->addAction(tr("&Reset zoom"), m_timeline, &TimelineView::resetZoom)->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addAction(tr("Show the &peak"), this, [this] { showLiveSet(std::nullopt); })->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    view->addAction(tr("&Filter layers"), this, [this] { m_layerFilter->setFocus(); })->setShortcut(QKeySequence::Find);
    QAction *flat = view->addAction(tr("Layers as a flat &list"));
    flat->setCheckable(true);
    flat->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    connect(flat, &QAction::toggled, this, [this](bool on) {
        m_layers->setFlat(on);
        m_layerView->setRootIsDecorated(!on);
        m_layerView->expandAll();
    });
    view->addAction(tr("Choose a checkpoint &strategy"), this, [this] { m_whatIf->focusStrategy(); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));

    QMenu *run = menuBar()->addMenu(tr("&Run"));
    m_rerunAction = run->addAction(tr("&Rerun"), this, &MainWindow::rerun);
    m_rerunAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run->addAction(tr("&Cancel"), this, &MainWindow::cancel)->setShortcut(QKeySequence(Qt::Key_Escape));
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
    m_loader->cancel(DocumentLoader::Purpose::Open);
    m_loader->cancel(DocumentLoader::Purpose::Run);
    m_replay->cancel();
}

bool MainWindow::isRerunning() const
{
    return m_replay->isRunning() || !m_readingRuns.empty();
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
    const bool busy = m_replay->isRunning() || m_loader->isLoading(DocumentLoader::Purpose::Open)
                      || m_loader->isLoading(DocumentLoader::Purpose::Run);
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
    setBusy(tr("Opening %1…").arg(paths.join(QStringLiteral(", "))));
    m_emptyState->showProblem({});
}

void MainWindow::onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents)
{
    if (purpose == DocumentLoader::Purpose::Run) {
        auto pending = m_readingRuns.extract(ticket);
        if (pending.empty())
            return;
        RunRecord &record = pending.mapped();
        record.document = documents.front();
        if (documents.size() == 2) { // a relaunch: the run's trace and the baseline's beside it
            record.measured.peakAllocatedBytes = documents[0]->peakBytes;
            record.measured.stepTimesMs = documents[0]->stepTimesMs();
            record.measured.baselinePeakAllocatedBytes = documents[1]->peakBytes;
            record.measured.baselineStepTimesMs = documents[1]->stepTimesMs();
        }
        addRun(record);
        return;
    }
    if (ticket != m_openTicket)
        return;
    startSession(documents);
    rememberRecent(documents.front()->filePath());
    for (const DocumentPtr &document : documents) {
        if (const std::string warning = document->trace->metaValue(metakey::ImportWarnings); !warning.empty())
            statusBar()->showMessage(tr("%1: %2").arg(document->filePath(), QString::fromStdString(warning)));
    }
    setIdle();
    Q_EMIT documentLoaded();
}

void MainWindow::onLoadFailed(quint64 ticket, DocumentLoader::Purpose purpose, const QString &message, bool cancelled)
{
    if (purpose == DocumentLoader::Purpose::Run) {
        auto pending = m_readingRuns.extract(ticket);
        if (pending.empty())
            return;
        pending.mapped().outcome = cancelled ? tr("cancelled") : message;
        addRun(pending.mapped());
        return;
    }
    if (ticket != m_openTicket)
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

void MainWindow::startSession(std::vector<DocumentPtr> documents)
{
    // A rerun of the previous trace would land in the wrong table.
    if (m_replay->isRunning())
        m_replay->cancel();
    m_loader->cancel(DocumentLoader::Purpose::Run);
    m_readingRuns.clear();
    m_session = Session{};
    m_session.id = m_nextSession++;
    m_session.processes = std::move(documents);
    m_processSelector->clear();
    for (const DocumentPtr &document : m_session.processes)
        m_processSelector->addItem(processLabel(*document));
    m_processSelectorAction->setVisible(m_session.processes.size() > 1);
    m_session.document = m_session.processes.front();
    showDocument(m_session.document);
}

void MainWindow::showProcess(int index)
{
    if (index < 0 || index >= int(m_session.processes.size()) || m_session.processes[std::size_t(index)] == document())
        return;
    if (m_processSelector->currentIndex() != index)
        m_processSelector->setCurrentIndex(index);
    m_session.document = m_session.processes[std::size_t(index)];
    m_session.schedule.clear();
    m_session.pickedTime.reset();
    m_session.rerunCount = 0;
    showDocument(m_session.document);
}

RunRecord MainWindow::baselineRun(const TraceDocument &document) const
{
    // The trace itself is the first run: what the reruns are compared with.
    const Prediction baseline = predict(*document.model, CheckpointSchedule{});
    RunRecord record;
    record.label = tr("baseline");
    record.baseline = true;
    for (const std::string &unit : document.checkpoint)
        record.checkpoint << QString::fromStdString(unit);
    record.predictedPeakBytes = baseline.peakBytes;
    record.predictedStepNs = record.modelStepNs = baseline.stepTimeNs;
    record.document = m_session.document;
    const QJsonObject result =
        QJsonDocument::fromJson(QByteArray::fromStdString(document.trace->metaValue(metakey::ReplayResult))).object();
    record.measured.peakAllocatedBytes = result.contains(QLatin1String("peak_allocated_bytes"))
                                             ? static_cast<std::int64_t>(result.value(QLatin1String("peak_allocated_bytes")).toDouble())
                                             : document.peakBytes;
    record.measured.stepTimesMs = document.stepTimesMs();
    return record;
}

void MainWindow::showDocument(const DocumentPtr &document)
{
    const std::string name = std::filesystem::path(document->path).filename().string();
    setWindowTitle(tr("%1 — PeakLens").arg(QString::fromStdString(visibleText(name))));
    const bool hasLayers = !document->trace->layers.empty();
    m_pages->setCurrentIndex(1); // laid out before the columns are fitted to it
    m_layers->resetData(document);
    m_timeline->setDocument(document);
    setGroupByLayer(hasLayers && m_byLayerAction->isChecked());
    m_byLayerAction->setEnabled(hasLayers);
    m_layerView->expandAll();
    // Layer names in full (the tree scrolls sideways when they are long); the kind gives way.
    for (int column = 0; column < LayerModel::NumColumns; ++column)
        m_layerView->resizeColumnToContents(column);
    m_layerView->setColumnWidth(LayerModel::NameColumn,
                                std::min(m_layerView->columnWidth(LayerModel::NameColumn), m_layerView->width() * 2 / 5));
    m_livePane->setDefaultGrouping(hasLayers);
    if (document->model) {
        const Prediction baseline = predict(*document->model, CheckpointSchedule{});
        m_whatIf->setBaseline(baseline.peakBytes, baseline.stepTimeNs);
        m_runsPane->reset(document, {baselineRun(*document)});
        updatePrediction();
    } else {
        m_whatIf->setUnavailable(noModelText(*document));
        m_runsPane->reset(document, {});
        m_timeline->setPrediction({});
    }
    m_timeline->setComparison({}, {});
    showLiveSet(std::nullopt);
    setIdle();
    const auto count = [](std::size_t n, const char *noun) {
        return QString::fromStdString(formatCount(static_cast<std::int64_t>(n)) + " " + noun + (n == 1 ? "" : "s"));
    };
    QString status = count(document->trace->events.size(), "memory event") + QStringLiteral(", ")
                     + count(document->trace->layers.size(), "layer") + QStringLiteral(", ")
                     + count(document->trace->steps.size(), "step");
    if (document->model && document->model->backwardEstimated)
        status += tr(" — the trace times no layer's backward: it is estimated from when each layer's saved blocks were freed");
    if (document->trace->metaValue(metakey::AllocatorView) == "segments")
        status += tr(" — recorded with PyTorch's caching allocator, which hides tensors: only its segments (reserved "
                     "memory) were seen. Record with the exact or async allocator for per-layer memory.");
    statusBar()->showMessage(status);
}

void MainWindow::updateRerunAction()
{
    const QString reason = document() ? ReplayProcess::unavailableReason(*document()) : tr("no trace is open");
    const bool running = isRerunning();
    m_rerunAction->setEnabled(reason.isEmpty() && !running);
    m_rerunAction->setToolTip(running ? tr("A rerun is running (Esc cancels it)")
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
    const Prediction prediction = predict(model, m_session.schedule);
    RunRecord record;
    record.label = tr("rerun %1").arg(++m_session.rerunCount);
    for (const std::string &unit : CheckpointStrategy::of(m_session.schedule, chainPaths(model), chainParts(model)).unitTexts())
        record.checkpoint << QString::fromStdString(unit);
    record.predictedPeakBytes = prediction.peakBytes;
    record.predictedStepNs = prediction.stepTimeNs;
    record.modelStepNs = predict(model, CheckpointSchedule{}).stepTimeNs;
    m_rerunSession = m_session.id;
    m_detailTabs->setCurrentWidget(m_runsPane);
    setBusy(tr("Rerunning with %1 checkpointed…")
                .arg(record.checkpoint.isEmpty() ? tr("nothing") : record.checkpoint.join(QStringLiteral(", "))));
    m_replay->start(*document(), record);
    updateRerunAction();
}

void MainWindow::onRerunFinished(RunRecord record)
{
    if (m_rerunSession != m_session.id) { // the trace it belonged to is closed
        setIdle();
        return;
    }
    if (!record.tracePaths.isEmpty() && record.outcome != tr("cancelled")) {
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
    m_runsPane->append(record);
    statusBar()->showMessage(record.outcome.isEmpty() ? tr("%1 measured.").arg(record.label)
                                                      : tr("%1: %2").arg(record.label, record.outcome));
    setIdle();
    Q_EMIT rerunFinished();
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
        const CheckpointStrategy strategy =
            run.baseline ? CheckpointStrategy() : CheckpointStrategy::parse(run.checkpoint.join(QLatin1Char(',')).toStdString());
        showSchedule(planForStrategy(model, strategy));
        m_whatIf->showStrategy(strategy);
        updatePrediction();
    } catch (const Error &) {
        // Toggles the chain no longer has (after a change of chain): the prediction stays.
    }
    std::vector<PredictedPoint> curve;
    if (run.document && !run.baseline) {
        if (const auto alignment = alignSteps(*run.document->trace, *document()->trace, model.step)) {
            for (const SeriesPoint &point : alignedSeries(run.document->byCategory.allocated, *alignment))
                curve.push_back({point.timeNs, point.bytes});
        }
    }
    m_timeline->setComparison(curve, tr("measured (%1)").arg(run.label));
}

void MainWindow::exportReportTo(const QString &path)
{
    if (!document() || m_exporter.isRunning())
        return;
    // The open trace is the baseline; each measured rerun is compared with it, with the
    // figures the Runs table shows, not analysed again.
    std::vector<ReportInput> traces{{document()->path, document(), std::nullopt}};
    // Never written onto: anything the window has open.
    std::vector<std::string> inputs{document()->path};
    for (const DocumentPtr &process : m_session.processes)
        inputs.push_back(process->path);
    for (const RunRecord &run : runsModel()->runs()) {
        if (run.document && !run.baseline) {
            traces.push_back({run.label.toStdString(), run.document, run.measured});
            inputs.push_back(run.document->path);
        }
    }
    statusBar()->showMessage(tr("Writing %1…").arg(path));
    m_exporter.disconnect(this);
    connect(&m_exporter, &QFutureWatcher<QString>::finished, this, [this, path] {
        const QString problem = m_exporter.result();
        statusBar()->showMessage(problem.isEmpty() ? tr("Wrote %1.").arg(path) : problem);
        if (!problem.isEmpty() && showsDialogs())
            QMessageBox::critical(this, tr("Cannot export the report"), problem);
        Q_EMIT reportExported(path, problem);
    });
    m_exporter.setFuture(QtConcurrent::run([traces, inputs, path]() -> QString {
        try {
            exportReport(buildReport(traces, std::nullopt), path, inputs);
            return {};
        } catch (const std::exception &error) {
            return QString::fromStdString(visibleText(error.what()));
        }
    }));
}

void MainWindow::setGroupByLayer(bool byLayer)
{
    m_byLayerAction->setChecked(byLayer);
    m_byCategoryAction->setChecked(!byLayer);
    m_timeline->setGrouping(byLayer ? GroupBy::Layer : GroupBy::Category);
}

RecordDialog *MainWindow::recordDialog()
{
    if (!m_recordDialog) {
        m_recordDialog = new RecordDialog(this);
        connect(m_recordDialog, &RecordDialog::recorded, this, &MainWindow::openFiles);
    }
    return m_recordDialog;
}

LiveSetModel *MainWindow::liveSetModel() const
{
    return m_livePane->model();
}

void MainWindow::showLiveSet(std::optional<std::int64_t> timeNs)
{
    m_session.pickedTime = timeNs;
    m_timeline->setMarkedTime(timeNs);
    m_livePane->showLiveSet(document(), timeNs);
}

void MainWindow::applyStrategy()
{
    if (!document() || !document()->model)
        return;
    const CostModel &model = *document()->model;
    std::optional<Plan> plan;
    switch (m_whatIf->strategy()) {
    case WhatIfBar::Strategy::Custom: break;
    case WhatIfBar::Strategy::Rule: plan = planForStrategy(model, m_whatIf->rule()); break;
    case WhatIfBar::Strategy::Budget:
        if (m_whatIf->budgetBytes() > 0)
            plan = planForBudget(model, static_cast<std::int64_t>(m_whatIf->budgetBytes()));
        break;
    case WhatIfBar::Strategy::Overhead: plan = planForOverhead(model, m_whatIf->overheadFraction()); break;
    }
    if (!plan)
        return;
    showSchedule(*plan);
    updatePrediction();
    if (!plan->feasible)
        m_whatIf->showPrediction(plan->prediction.peakBytes, plan->prediction.stepTimeNs, false);
}

void MainWindow::selectLayer(const QString &path)
{
    if (!document())
        return;
    if (const auto layer = document()->trace->findLayer(path.toStdString()))
        m_layerView->setCurrentIndex(m_layerProxy->mapFromSource(m_layers->indexOfLayer(*layer)));
}

void MainWindow::setCheckpointStrategy(const QString &strategy)
{
    if (!document() || !document()->model)
        return;
    const CheckpointStrategy parsed = CheckpointStrategy::parse(strategy.toStdString());
    showSchedule(planForStrategy(*document()->model, parsed));
    m_whatIf->showStrategy(parsed);
    updatePrediction();
}

void MainWindow::showSchedule(const Plan &plan)
{
    m_session.schedule = plan.schedule;
    {
        const QSignalBlocker blocker(m_layers);
        m_layers->setSchedule(plan.schedule);
    }
    m_layerView->viewport()->update();
}

void MainWindow::updatePrediction()
{
    if (!document() || !document()->model)
        return;
    const CostModel &model = *document()->model;
    const Prediction prediction = predict(model, m_session.schedule);
    m_whatIf->showPrediction(prediction.peakBytes, prediction.stepTimeNs, true);
    m_timeline->setPrediction(m_session.schedule.empty() ? std::vector<PredictedPoint>{} : predictCurve(model, m_session.schedule));
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

void MainWindow::rememberRecent(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString &path : recent)
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openFile(path); })->setToolTip(path);
    m_recentMenu->setEnabled(!recent.isEmpty());
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

} // namespace peaklens::gui
