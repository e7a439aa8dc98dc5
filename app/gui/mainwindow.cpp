#include "mainwindow.h"

#include "localpath.h"

#include "layereditor.h"
#include "models/layermodel.h"
#include "models/livesetmodel.h"
#include "models/runcomparisonmodel.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "replayprocess.h"
#include "reportexport.h"
#include "widgets/livesetpane.h"
#include "widgets/tables.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/analysis/levelofdetail.h"
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
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSplitter>
#include <QTabWidget>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>
#include <QTreeView>
#include <QUnhandledException>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdlib>
#include <limits>

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
    return QFileInfo(document.path).fileName();
}

QString bytesText(std::int64_t bytes)
{
    return QString::fromStdString(formatBytes(bytes));
}


} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_timeline(new TimelineView(this))
    , m_whatIf(new WhatIfBar(this))
    , m_layers(new LayerModel(this))
    , m_layerProxy(new QSortFilterProxyModel(this))
    , m_livePane(new LiveSetPane(this))
    , m_layerEditor(new LayerEditor(this))
    , m_progress(new QProgressBar(this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_detailTabs(new QTabWidget(this))
    , m_runs(new RunsModel(this))
    , m_comparison(new RunComparisonModel(this))
    , m_replay(new ReplayProcess(this))
    , m_processSelector(new QComboBox(this))
{
    setWindowTitle(tr("PeakLens"));
    setAcceptDrops(true);

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
    m_runsView = makeTable(m_runs, this);
    m_runsView->setSortingEnabled(false);
    auto *comparisonProxy = new QSortFilterProxyModel(this);
    comparisonProxy->setSourceModel(m_comparison);
    comparisonProxy->setSortRole(RunComparisonModel::SortRole);
    m_comparisonView = makeTable(comparisonProxy, this);
    m_comparisonView->sortByColumn(RunComparisonModel::LayerColumn, Qt::AscendingOrder);
    auto *runsPane = new QSplitter(Qt::Vertical, this);
    runsPane->addWidget(m_runsView);
    runsPane->addWidget(m_comparisonView);
    m_detailTabs->addTab(m_livePane, tr("&Live memory"));
    m_detailTabs->addTab(runsPane, tr("R&uns"));

    auto *bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(layersPane);
    bottom->addWidget(m_detailTabs);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    auto *main = new QSplitter(Qt::Vertical, this);
    main->addWidget(m_timeline);
    main->addWidget(bottom);
    main->setStretchFactor(0, 3);
    main->setStretchFactor(1, 2);
    main->setSizes({500, 380});
    bottom->setSizes({760, 640});
    setCentralWidget(main);

    auto *whatIfToolBar = addToolBar(tr("What-if"));
    whatIfToolBar->setObjectName(QStringLiteral("whatIf"));
    whatIfToolBar->setMovable(false);
    whatIfToolBar->addWidget(m_whatIf);
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
    setLoading(false);

    createActions();

    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_cancelFlag)
            m_cancelFlag->store(true);
        m_replay->cancel();
    });
    connect(m_replay, &ReplayProcess::progress, this, [this](int step, int steps) {
        if (steps == 0) { // a relaunched command: no step count, only that it runs
            m_progress->setRange(0, 0);
            statusBar()->showMessage(tr("Rerunning: the recorded command is running under the collector…"));
            return;
        }
        m_progress->setValue(step * 1000 / steps);
        statusBar()->showMessage(tr("Rerunning: step %1 of %2…").arg(step).arg(steps));
    });
    connect(m_replay, &ReplayProcess::finished, this, &MainWindow::onRerunFinished);
    connect(m_runsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { compareWithRun(current.row()); });
    connect(&m_loader, &QFutureWatcher<std::vector<DocumentPtr>>::finished, this, [this] {
        setLoading(false);
        try {
            try {
                m_processes = m_loader.result();
                m_processSelector->clear();
                for (const DocumentPtr &document : m_processes)
                    m_processSelector->addItem(processLabel(*document));
                m_processSelectorAction->setVisible(m_processes.size() > 1);
                showDocument(m_processes.front());
            } catch (const QUnhandledException &wrapped) {
                // QtConcurrent wraps exceptions that are not QExceptions; unwrap ours.
                if (wrapped.exception())
                    std::rethrow_exception(wrapped.exception());
                throw;
            }
            rememberRecent(m_loadingPaths.front());
            for (const DocumentPtr &document : m_processes) {
                if (const std::string warning = document->trace->metaValue(metakey::ImportWarnings); !warning.empty())
                    statusBar()->showMessage(tr("%1: %2").arg(document->path, QString::fromStdString(warning)));
            }
            Q_EMIT documentLoaded();
        } catch (const ImportCancelled &) {
            statusBar()->showMessage(tr("Opening %1 was cancelled.").arg(m_loadingPaths.join(QStringLiteral(", "))), 5000);
            Q_EMIT loadFailed(tr("cancelled"));
        } catch (const std::exception &error) {
            const QString message = QString::fromStdString(visibleText(error.what()));
            Q_EMIT loadFailed(message);
            if (QApplication::platformName() != QLatin1String("offscreen"))
                QMessageBox::critical(this, tr("Cannot open the trace"), message);
            statusBar()->showMessage(message);
        }
    });
    connect(m_layers, &LayerModel::checkpointChanged, this, [this] {
        m_whatIf->markCustom();
        m_schedule = m_layers->schedule();
        updatePrediction();
    });
    connect(m_whatIf, &WhatIfBar::strategyChanged, this, &MainWindow::applyStrategy);
    connect(m_timeline, &TimelineView::timeClicked, this, [this](std::int64_t timeNs) { showLiveSet(timeNs); });
    connect(m_timeline, &TimelineView::rangeSelected, this, &MainWindow::showRangeStats);
    m_layerView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_layerView, &QWidget::customContextMenuRequested, this, [this](const QPoint &position) {
        const QVariant layer = m_layerProxy->data(m_layerView->indexAt(position), LayerModel::LayerRole);
        if (m_document && layer.isValid() && !m_layerEditor->isBusy())
            m_layerEditor->menuFor(m_document, layer.toUInt(), this)->popup(m_layerView->viewport()->mapToGlobal(position));
    });
    connect(m_layerEditor, &LayerEditor::edited, this, [this](const DocumentPtr &document, const QString &what) {
        std::replace(m_processes.begin(), m_processes.end(), m_document, document);
        showDocument(document);
        statusBar()->showMessage(what, 8000);
        Q_EMIT documentEdited();
    });
    connect(m_layerEditor, &LayerEditor::failed, this, [this](const QString &message) {
        if (QApplication::platformName() != QLatin1String("offscreen"))
            QMessageBox::warning(this, tr("Cannot change the layers"), message);
        statusBar()->showMessage(message, 8000);
    });
    connect(m_layerView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        const QVariant layer = m_layerProxy->data(current, LayerModel::LayerRole);
        m_timeline->highlightLayer(layer.isValid() ? std::optional<std::uint32_t>(layer.toUInt()) : std::nullopt);
    });
    resize(1400, 900);
}

MainWindow::~MainWindow()
{
    stopLoading();
    m_exporter.waitForFinished();
}

void MainWindow::stopLoading()
{
    if (!m_loader.isRunning())
        return;
    m_cancelFlag->store(true);
    try {
        m_loader.waitForFinished();
    } catch (const std::exception &) {
        // Cancelled or failed: the result is not wanted any more.
    }
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open…"), this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(
            this, tr("Open traces (several: one per rank)"), QString(),
            tr("Traces (*.peaklens *.pltxt *.pickle *.json *.gz);;All files (*)"));
        openFiles(paths);
    });
    open->setShortcut(QKeySequence::Open);
    QAction *record = file->addAction(tr("Re&cord…"), this, [this] { recordDialog()->show(); });
    record->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    record->setStatusTip(tr("Run a training command under the CUPTI collector and open its traces"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    QAction *reload = file->addAction(tr("Re&load"), this, [this] {
        QStringList paths;
        for (const DocumentPtr &document : m_processes)
            paths << document->path;
        openFiles(paths);
    });
    reload->setShortcut(QKeySequence::Refresh);
    QAction *exportReport = file->addAction(tr("&Export report…"), this, [this] {
        if (!m_document)
            return;
        const QString suggested = QFileInfo(m_document->path).completeBaseName() + QStringLiteral("-report.pdf");
        const QString path = QFileDialog::getSaveFileName(this, tr("Export report"), suggested,
                                                          tr("PDF (*.pdf);;HTML (*.html);;CSV (*.csv);;JSON (*.json)"));
        if (!path.isEmpty())
            exportReportTo(path);
    });
    exportReport->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)->setShortcut(QKeySequence::Quit);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    auto *byCategory = view->addAction(tr("Stack by &category"), this, [this] { setGroupByLayer(false); });
    byCategory->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    m_byLayerAction = view->addAction(tr("Stack by &layer"), this, [this] { setGroupByLayer(true); });
    m_byLayerAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
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
    m_rerunAction = run->addAction(tr("&Rerun with these toggles"), this, &MainWindow::rerun);
    m_rerunAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run->addAction(tr("&Cancel rerun"), m_replay, &ReplayProcess::cancel)->setShortcut(QKeySequence(Qt::Key_Escape));
    auto *toolBar = findChild<QToolBar *>(QStringLiteral("whatIf"));
    toolBar->addAction(m_rerunAction);
    updateRerunAction();
}

void MainWindow::exportReportTo(const QString &path)
{
    if (!m_document || m_exporter.isRunning())
        return;
    // The open trace is the baseline; each measured rerun is compared with it.
    std::vector<std::pair<std::string, TracePtr>> traces{{localPath(m_document->path), m_document->trace}};
    // Never written onto: anything the window has open.
    std::vector<std::string> inputs{localPath(m_document->path)};
    for (const DocumentPtr &process : m_processes)
        inputs.push_back(localPath(process->path));
    for (int row = 1; row < m_runs->rowCount(); ++row) {
        if (const DocumentPtr &run = m_runs->run(row).document) {
            traces.emplace_back(m_runs->run(row).label.toStdString(), run->trace);
            inputs.push_back(localPath(run->path));
        }
    }
    statusBar()->showMessage(tr("Writing %1…").arg(path));
    m_exporter.disconnect(this);
    connect(&m_exporter, &QFutureWatcher<QString>::finished, this, [this, path] {
        const QString problem = m_exporter.result();
        statusBar()->showMessage(problem.isEmpty() ? tr("Wrote %1.").arg(path) : problem);
        if (!problem.isEmpty() && QApplication::platformName() != QLatin1String("offscreen"))
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

void MainWindow::updateRerunAction()
{
    const QString reason = m_document ? ReplayProcess::unavailableReason(*m_document) : tr("no trace is open");
    m_rerunAction->setEnabled(reason.isEmpty() && !m_replay->isRunning());
    m_rerunAction->setToolTip(reason.isEmpty() ? tr("Run the step again with the checked layers checkpointed (Ctrl+R)")
                                               : tr("Cannot rerun: %1").arg(reason));
    m_rerunAction->setStatusTip(m_rerunAction->toolTip());
}

void MainWindow::rerun()
{
    if (!m_document || !m_document->costModel || m_replay->isRunning()
        || !ReplayProcess::unavailableReason(*m_document).isEmpty())
        return;
    const CostModel &model = *m_document->costModel;
    const Prediction prediction = predict(model, m_schedule);
    RunRecord record;
    record.label = tr("rerun %1").arg(++m_rerunCount);
    for (const std::string &unit : CheckpointStrategy::of(m_schedule, chainPaths(model), chainParts(model)).unitTexts())
        record.checkpoint << QString::fromStdString(unit);
    record.predictedPeakBytes = prediction.peakBytes;
    record.predictedStepNs = prediction.stepTimeNs;
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    m_progress->setValue(0);
    m_detailTabs->setCurrentIndex(1);
    statusBar()->showMessage(tr("Rerunning with %1 checkpointed…")
                                 .arg(record.checkpoint.isEmpty() ? tr("nothing") : record.checkpoint.join(QStringLiteral(", "))));
    m_replay->start(*m_document, record);
    updateRerunAction();
}

void MainWindow::onRerunFinished(const RunRecord &record)
{
    setLoading(false);
    m_runs->append(record);
    m_runsView->resizeColumnsToContents();
    m_runsView->setCurrentIndex(m_runs->index(m_runs->rowCount() - 1, 0));
    statusBar()->showMessage(record.outcome.isEmpty() ? tr("%1 measured.").arg(record.label)
                                                      : tr("%1: %2").arg(record.label, record.outcome));
    updateRerunAction();
    Q_EMIT rerunFinished();
}

void MainWindow::compareWithRun(int row)
{
    if (row < 0 || row >= m_runs->rowCount() || !m_document || !m_document->costModel) {
        m_timeline->setComparison({}, {});
        m_comparison->resetData(nullptr, nullptr);
        return;
    }
    const RunRecord &run = m_runs->run(row);
    m_comparison->resetData(m_document, run.document);
    m_comparisonView->resizeColumnsToContents();
    std::vector<PredictedPoint> curve;
    if (run.document) {
        const CostModel &model = *m_document->costModel;
        for (const SeriesPoint &point : alignedStep(*run.document->trace, run.document->byCategory.allocated, model.step, model.stepBeginNs))
            curve.push_back({point.timeNs, point.bytes});
    }
    m_timeline->setComparison(curve, tr("measured (%1)").arg(run.label));
}

void MainWindow::setGroupByLayer(bool byLayer)
{
    m_timeline->setGrouping(byLayer ? GroupBy::Layer : GroupBy::Category);
}

void MainWindow::openFile(const QString &path)
{
    openFiles({path});
}

void MainWindow::openFiles(const QStringList &paths)
{
    if (paths.isEmpty())
        return;
    stopLoading();
    m_loadingPaths = paths;
    m_cancelFlag = std::make_shared<std::atomic<bool>>(false);
    setLoading(true);
    statusBar()->showMessage(tr("Opening %1…").arg(paths.join(QStringLiteral(", "))));
    QPointer<QProgressBar> bar = m_progress;
    auto cancel = m_cancelFlag;
    m_loader.setFuture(QtConcurrent::run([paths, cancel, bar] {
        std::vector<DocumentPtr> documents;
        for (const QString &path : paths) {
            ImportProgress progress;
            progress.cancel = cancel.get();
            const double done = double(documents.size());
            progress.report = [bar, done, count = double(paths.size())](double fraction) {
                QMetaObject::invokeMethod(bar, [bar, value = (done + fraction) / count] {
                    if (bar)
                        bar->setValue(static_cast<int>(value * 1000));
                });
            };
            documents.push_back(loadDocument(path, progress));
        }
        // Ranks in order, then the other processes.
        std::stable_sort(documents.begin(), documents.end(), [](const DocumentPtr &a, const DocumentPtr &b) {
            const auto rank = [](const DocumentPtr &d) {
                const std::string value = d->trace->metaValue(metakey::Rank);
                return value.empty() ? std::numeric_limits<long long>::max() : std::atoll(value.c_str());
            };
            return rank(a) < rank(b);
        });
        return documents;
    }));
}

void MainWindow::showProcess(int index)
{
    if (index < 0 || index >= int(m_processes.size()) || m_processes[std::size_t(index)] == m_document)
        return;
    if (m_processSelector->currentIndex() != index)
        m_processSelector->setCurrentIndex(index);
    showDocument(m_processes[std::size_t(index)]);
}

RecordDialog *MainWindow::recordDialog()
{
    if (!m_recordDialog) {
        m_recordDialog = new RecordDialog(this);
        connect(m_recordDialog, &RecordDialog::recorded, this, &MainWindow::openFiles);
    }
    return m_recordDialog;
}

void MainWindow::setLoading(bool loading)
{
    m_progress->setRange(0, 1000);
    m_progress->setVisible(loading);
    m_cancel->setVisible(loading);
    m_progress->setValue(0);
}

void MainWindow::showDocument(const DocumentPtr &document)
{
    m_document = document;
    m_pickedTime.reset();
    setWindowTitle(tr("%1 — PeakLens").arg(QString::fromStdString(visibleText(localPath(QFileInfo(document->path).fileName())))));
    m_layers->resetData(document);
    m_timeline->setDocument(document);
    m_layerView->expandAll();
    // Layer names in full (the tree scrolls sideways when they are long); the kind gives way.
    for (int column = 0; column < LayerModel::NumColumns; ++column)
        m_layerView->resizeColumnToContents(column);
    m_layerView->setColumnWidth(LayerModel::NameColumn,
                                std::min(m_layerView->columnWidth(LayerModel::NameColumn), m_layerView->width() * 2 / 5));
    m_rerunCount = 0;
    m_runs->resetData({});
    m_schedule.clear();
    if (document->costModel) {
        const Prediction baseline = predict(*document->costModel, CheckpointSchedule{});
        m_whatIf->setBaseline(baseline.peakBytes, baseline.stepTimeNs);
        updatePrediction();
        // The trace itself is the first run: what the reruns are compared with.
        RunRecord record;
        record.label = tr("baseline (this trace)");
        const QString toggles = QString::fromStdString(document->trace->metaValue(metakey::Checkpoint));
        try {
            for (const std::string &unit : CheckpointStrategy::parse(toggles.toStdString()).unitTexts())
                record.checkpoint << QString::fromStdString(unit);
        } catch (const Error &) {
            record.checkpoint = toggles.isEmpty() ? QStringList() : toggles.split(QLatin1Char(','));
        }
        record.predictedPeakBytes = baseline.peakBytes;
        record.predictedStepNs = baseline.stepTimeNs;
        const QJsonObject result =
            QJsonDocument::fromJson(QByteArray::fromStdString(document->trace->metaValue(metakey::ReplayResult))).object();
        record.measuredPeakBytes = result.contains(QLatin1String("peak_allocated_bytes"))
                                       ? std::optional<std::int64_t>(static_cast<std::int64_t>(result.value(QLatin1String("peak_allocated_bytes")).toDouble()))
                                       : baseline.peakBytes;
        if (result.value(QLatin1String("step_time_ms")).isDouble())
            record.measuredStepMs = result.value(QLatin1String("step_time_ms")).toDouble();
        else
            record.measuredStepMs = static_cast<double>(baseline.stepTimeNs) / 1e6;
        m_runs->append(record);
        m_runsView->resizeColumnsToContents();
    } else {
        m_whatIf->setUnavailable(document->costModelProblem);
    }
    updateRerunAction();
    showLiveSet(std::nullopt);
    const auto count = [](std::size_t n, const char *noun) {
        return QString::fromStdString(formatCount(static_cast<std::int64_t>(n)) + " " + noun + (n == 1 ? "" : "s"));
    };
    QString status = count(document->trace->events.size(), "memory event") + QStringLiteral(", ")
                     + count(document->trace->layers.size(), "layer") + QStringLiteral(", ")
                     + count(document->trace->steps.size(), "step");
    if (document->costModel && document->costModel->backwardEstimated)
        status += tr(" — the trace times no layer's backward: it is estimated from when each layer's saved blocks were freed");
    if (document->trace->metaValue(metakey::AllocatorView) == "segments")
        status += tr(" — recorded with PyTorch's caching allocator, which hides tensors: only its segments (reserved "
                     "memory) were seen. Record with the exact or async allocator for per-layer memory.");
    statusBar()->showMessage(status);
}

LiveSetModel *MainWindow::liveSetModel() const
{
    return m_livePane->model();
}

void MainWindow::showLiveSet(std::optional<std::int64_t> timeNs)
{
    m_pickedTime = timeNs;
    m_livePane->showLiveSet(m_document, timeNs);
}

void MainWindow::applyStrategy()
{
    if (!m_document || !m_document->costModel)
        return;
    const CostModel &model = *m_document->costModel;
    std::optional<Plan> plan;
    switch (m_whatIf->strategy()) {
    case WhatIfBar::Strategy::Custom: break;
    case WhatIfBar::Strategy::Rule: plan = planForStrategy(model, m_whatIf->rule()); break;
    case WhatIfBar::Strategy::Budget: plan = planForBudget(model, static_cast<std::int64_t>(m_whatIf->budgetBytes())); break;
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
    if (!m_document)
        return;
    if (const auto layer = m_document->trace->findLayer(path.toStdString()))
        m_layerView->setCurrentIndex(m_layerProxy->mapFromSource(m_layers->indexOfLayer(*layer)));
}

void MainWindow::setCheckpointStrategy(const QString &strategy)
{
    if (!m_document || !m_document->costModel)
        return;
    const CheckpointStrategy parsed = CheckpointStrategy::parse(strategy.toStdString());
    showSchedule(planForStrategy(*m_document->costModel, parsed));
    m_whatIf->showStrategy(parsed);
    updatePrediction();
}

void MainWindow::showSchedule(const Plan &plan)
{
    m_schedule = plan.schedule;
    {
        const QSignalBlocker blocker(m_layers);
        m_layers->setSchedule(plan.schedule);
    }
    m_layerView->viewport()->update();
}

void MainWindow::updatePrediction()
{
    if (!m_document || !m_document->costModel)
        return;
    const CostModel &model = *m_document->costModel;
    const Prediction prediction = predict(model, m_schedule);
    m_whatIf->showPrediction(prediction.peakBytes, prediction.stepTimeNs, true);
    m_timeline->setPrediction(m_schedule.empty() ? std::vector<PredictedPoint>{} : predictCurve(model, m_schedule));
}

void MainWindow::showRangeStats(std::int64_t beginNs, std::int64_t endNs)
{
    if (!m_document)
        return;
    const SpanStats stats = spanStats(*m_document->trace, m_document->byCategory, beginNs, endNs, &m_document->allocatedBlocks);
    statusBar()->showMessage(tr("%1 ms selected: highest %2, lowest %3, %4 allocated, %5 freed")
                                 .arg(static_cast<double>(endNs - beginNs) / 1e6, 0, 'f', 3)
                                 .arg(bytesText(stats.highestBytes), bytesText(stats.lowestBytes),
                                      bytesText(stats.allocatedBytes), bytesText(stats.freedBytes)));
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
