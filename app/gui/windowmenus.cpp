// SPDX-License-Identifier: GPL-3.0-or-later
#include "windowmenus.h"

#include "livecontroller.h"
#include "mainwindow.h"
#include "recorddialog.h"
#include "widgets/layerspane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"
#include "windowsettings.h"

#include "core/format/remotefile.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenuBar>
#include <QSettings>

namespace peaklens::gui {

namespace {

QString traceFiles()
{
    return QObject::tr("Traces (*.peaklens *.pltxt *.pickle *.json *.gz);;All files (*)");
}

QAction *add(QMenu *menu, const QString &text, const QKeySequence &shortcut, const std::function<void()> &triggered)
{
    QAction *action = menu->addAction(text);
    action->setShortcut(shortcut);
    QObject::connect(action, &QAction::triggered, menu, triggered);
    return action;
}

} // namespace

WindowActions addMenus(MainWindow &window)
{
    MainWindow *w = &window;
    WindowActions actions{};
    QMenu *file = window.menuBar()->addMenu(QObject::tr("&File"));
    actions.open = add(file, QObject::tr("&Open…"), QKeySequence::Open, [w] {
        w->openFiles(QFileDialog::getOpenFileNames(w, QObject::tr("Open traces (several: one per rank)"), {}, traceFiles()));
    });
    actions.open->setToolTip(QObject::tr("Open a trace, a PyTorch memory snapshot or a Kineto trace (Ctrl+O)"));
    add(file, QObject::tr("Open Re&mote…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), [w] {
        // The last one asked, for the next file of the same run.
        QSettings settings;
        bool chosen = false;
        const QString path =
            QInputDialog::getText(
                w, QObject::tr("Open a trace on a GPU server"),
                QObject::tr("A trace, or a folder of ranks, on a machine you reach with ssh:\nssh://HOST/PATH (HOST as for ssh: "
                            "user@host, or an alias from ~/.ssh/config; ~/ for the home folder there)"),
                QLineEdit::Normal, settings.value(QStringLiteral("remote/last"), QString::fromLatin1(kRemoteScheme)).toString(),
                &chosen)
                .trimmed();
        if (!chosen || path.isEmpty())
            return;
        settings.setValue(QStringLiteral("remote/last"), path);
        w->openFile(path.startsWith(QLatin1String(kRemoteScheme)) ? path : QLatin1String(kRemoteScheme) + path);
    })->setToolTip(QObject::tr("Open a trace or a folder of ranks on another machine, read through ssh (Ctrl+Shift+O)"));
    actions.record =
        add(file, QObject::tr("Re&cord…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), [w] { w->recordDialog()->show(); });
    actions.record->setToolTip(
        QObject::tr("Run a training command here or on a GPU server, follow its trace as it is written, and open it"));
    actions.record->setStatusTip(actions.record->toolTip());
    actions.recent = new RecentFiles(file->addMenu(QObject::tr("Open &Recent")));
    QObject::connect(actions.recent, &RecentFiles::chosen, w, &MainWindow::openFile);
    add(file, QObject::tr("Re&load"), QKeySequence::Refresh, [w] {
        QStringList paths;
        for (const ProcessEntry &process : w->processes())
            paths << process.path;
        w->openFiles(paths);
    });
    add(file, QObject::tr("Co&mpare with…"), QKeySequence(Qt::CTRL | Qt::Key_D), [w] {
        if (w->document())
            w->compareWith(QFileDialog::getOpenFileName(w, QObject::tr("Compare the open trace with"), {}, traceFiles()));
    })->setToolTip(QObject::tr("Compare this trace with another at their peaks: by layer, allocation site and category"));
    add(file, QObject::tr("&Export report…"), QKeySequence(Qt::CTRL | Qt::Key_E), [w] {
        if (!w->document())
            return;
        const QString suggested = QFileInfo(w->document()->filePath()).completeBaseName() + QStringLiteral("-report.pdf");
        const QString path = QFileDialog::getSaveFileName(w, QObject::tr("Export report"), suggested,
                                                          QObject::tr("PDF (*.pdf);;HTML (*.html);;CSV (*.csv);;JSON (*.json)"));
        if (!path.isEmpty())
            w->exportReportTo(path);
    });
    file->addSeparator();
    add(file, QObject::tr("&Quit"), QKeySequence::Quit, &QApplication::closeAllWindows);

    QMenu *view = window.menuBar()->addMenu(QObject::tr("&View"));
    const std::array<std::pair<QString, GroupBy>, 4> stackBy = {{{QObject::tr("Stack by &category"), GroupBy::Category},
                                                                 {QObject::tr("Stack by &layer"), GroupBy::Layer},
                                                                 {QObject::tr("Stack by memory &pool"), GroupBy::Pool},
                                                                 {QObject::tr("Stack by &stream"), GroupBy::Stream}}};
    for (std::size_t i = 0; i < stackBy.size(); ++i) {
        const GroupBy groupBy = stackBy[i].second;
        QAction *action =
            add(view, stackBy[i].first, QKeySequence(Qt::CTRL | (Qt::Key_1 + int(i))), [w, groupBy] { w->setGrouping(groupBy); });
        action->setCheckable(true);
        actions.stackBy[i] = {action, groupBy};
    }
    actions.stackBy[2].first->setToolTip(
        QObject::tr("A band per memory pool (CUDA graph pools, torch.cuda.MemPool), with each pool's reserved memory"));
    actions.stackBy[3].first->setToolTip(QObject::tr("A band per CUDA stream, with the memory its segments reserve"));
    actions.loadWindow = add(view, QObject::tr("Read the Visible Time in &Full Detail"), QKeySequence(Qt::CTRL | Qt::Key_L),
                             [w] { w->loadWindowFrom(w->timeline()->visibleBeginNs()); });
    actions.loadWindow->setToolTip(QObject::tr("A file too big to hold at once shows a window of its events over the whole "
                                               "run's levels: read the window that begins where the view does"));
    actions.loadWindow->setEnabled(false);
    view->addSeparator();
    add(view, QObject::tr("&Reset zoom"), QKeySequence(Qt::CTRL | Qt::Key_0), [w] { w->timeline()->resetZoom(); });
    add(view, QObject::tr("Show the &peak"), QKeySequence(Qt::CTRL | Qt::Key_P), [w] { w->pickTime(std::nullopt); });
    add(view, QObject::tr("&Filter layers"), QKeySequence::Find, [w] { w->layersPane()->focusFilter(); });
    QAction *flat = view->addAction(QObject::tr("Layers as a flat &list"));
    flat->setCheckable(true);
    flat->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    QObject::connect(flat, &QAction::toggled, w, [w](bool on) { w->layersPane()->setFlat(on); });
    add(view, QObject::tr("Choose a checkpoint &strategy"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S),
        [w] { w->whatIfBar()->focusStrategy(); });

    QMenu *run = window.menuBar()->addMenu(QObject::tr("&Run"));
    actions.rerun = add(run, QObject::tr("&Rerun"), QKeySequence(Qt::CTRL | Qt::Key_R), [w] { w->rerun(); });
    add(run, QObject::tr("&Cancel"), QKeySequence(Qt::Key_Escape), [w] { w->cancel(); });
    run->addSeparator();
    add(run, QObject::tr("Plan for One Rank of a &Sharded Run…"), {}, [w] { w->askForShardedRank(); });
    run->addSeparator();
    run->addAction(window.live()->stopAction());
    return actions;
}

} // namespace peaklens::gui
