// SPDX-License-Identifier: GPL-3.0-or-later
// The main window's menus and what they open: files, recent files, dropped files, the
// recording dialog and report export.

#include "livecontroller.h"
#include "livefollow.h"
#include "localpath.h"
#include "mainwindow.h"
#include "models/layermodel.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "replayprocess.h"
#include "reportexport.h"
#include "runscontroller.h"
#include "runstore.h"
#include "showsdialogs.h"
#include "whatifcontroller.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/trace/visibletext.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTreeView>

namespace peaklens::gui {

namespace {

constexpr int kMaxRecent = 10;

} // namespace

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(tr("&Open…"), this, [this] {
        const QStringList paths =
            QFileDialog::getOpenFileNames(this, tr("Open traces (several: one per rank)"), QString(),
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
        for (const ProcessEntry &process : m_session.processes)
            paths << process.path;
        openFiles(paths);
    });
    reload->setShortcut(QKeySequence::Refresh);
    QAction *compare = file->addAction(tr("Co&mpare with…"), this, [this] {
        if (!document())
            return;
        compareWith(QFileDialog::getOpenFileName(this, tr("Compare the open trace with"), QString(),
                                                 tr("Traces (*.peaklens *.pltxt *.pickle *.json *.gz);;All files (*)")));
    });
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    compare->setToolTip(tr("Compare this trace with another at their peaks: by layer, allocation site and category"));
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
    view->addAction(tr("Show the &peak"), this, [this] { showLiveSet(std::nullopt); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
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
    run->addSeparator();
    run->addAction(m_live->stopAction());
}

void MainWindow::exportReportTo(const QString &path)
{
    if (!document() || m_exportJobs.isRunning())
        return;
    // The open trace is the baseline; each measured rerun is compared with it, with the
    // figures the Runs table shows, not analysed again.
    std::vector<ReportInput> traces{{document()->path, document(), std::nullopt}};
    // Never written onto: anything the window has open.
    std::vector<std::string> inputs{document()->path};
    for (const ProcessEntry &process : m_session.processes)
        inputs.push_back(localPath(process.path));
    for (const RunRecord &run : runsModel()->runs()) {
        if (run.document && !run.baseline) {
            traces.push_back({run.label.toStdString(), run.document, run.row.measured});
            inputs.push_back(run.document->path);
        }
    }
    statusBar()->showMessage(tr("Writing %1…").arg(path));
    const auto written = [this, path](const QString &problem) {
        statusBar()->showMessage(problem.isEmpty() ? tr("Wrote %1.").arg(path) : problem);
        if (!problem.isEmpty() && showsDialogs())
            QMessageBox::critical(this, tr("Cannot export the report"), problem);
        Q_EMIT reportExported(path, problem);
    };
    m_exportJobs.start(
        [traces, inputs, path](const Progress &) {
            checkReportPath(path);
            // The file dialog has asked before replacing a file.
            OutputFile output(localPath(path), OutputFile::Existing::Replace, inputs);
            exportReport(buildReport(traces, std::nullopt), output);
            return true;
        },
        [written](bool) { written({}); }, written);
}

RecordDialog *MainWindow::recordDialog()
{
    if (!m_recordDialog) {
        m_recordDialog = new RecordDialog(this);
        connect(m_recordDialog, &RecordDialog::started, this, &MainWindow::openFile);
        connect(m_recordDialog, &RecordDialog::recorded, this, [this](const QStringList &traces) {
            // The one trace followed while it was recorded is open already, to its end.
            if (!(traces.size() == 1 && m_live->following() && m_live->following()->path() == traces.front()))
                openFiles(traces);
        });
    }
    return m_recordDialog;
}

void MainWindow::restoreWindowState()
{
    const QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    for (QSplitter *splitter : findChildren<QSplitter *>(QRegularExpression(QStringLiteral(".+"))))
        splitter->restoreState(settings.value(QStringLiteral("window/splitter/") + splitter->objectName()).toByteArray());
}

void MainWindow::saveWindowState() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    for (const QSplitter *splitter : findChildren<QSplitter *>(QRegularExpression(QStringLiteral(".+"))))
        settings.setValue(QStringLiteral("window/splitter/") + splitter->objectName(), splitter->saveState());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!m_runs->keepUnsaved()) {
        event->ignore();
        return;
    }
    saveWindowState();
    QMainWindow::closeEvent(event);
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
    for (const QString &path : recent) {
        // A trace with reruns kept beside it says so: they come back with it.
        const qsizetype runs = QDir(runsFolderOf(path)).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size();
        const QString name = runs > 0 ? tr("%1 (with %n rerun(s))", nullptr, int(runs)).arg(QFileInfo(path).fileName())
                                      : QFileInfo(path).fileName();
        m_recentMenu->addAction(name, this, [this, path] { openFile(path); })->setToolTip(path);
    }
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

void MainWindow::setCheckpointStrategy(const QString &strategy)
{
    if (!document() || !document()->model)
        return;
    m_toggles->setStrategy(CheckpointStrategy::parse(strategy.toStdString()));
}

} // namespace peaklens::gui
