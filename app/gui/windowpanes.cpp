// SPDX-License-Identifier: GPL-3.0-or-later
#include "windowpanes.h"

#include "documentloader.h"
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
#include "widgets/whatifbar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

namespace peaklens::gui {

namespace {

template<typename Pane>
Pane *named(Pane *pane, const char *name)
{
    pane->setObjectName(QLatin1String(name));
    return pane;
}

} // namespace

WindowPanes::WindowPanes(QMainWindow *window, LayerModel *layerModel, QAction *open, QAction *record, QAction *rerun)
    : pages(new QStackedWidget(window))
    , emptyState(new EmptyState(open, record, window))
    , notes(named(new QLabel(window), "notes"))
    , timeline(new TimelineView(window))
    , layers(new LayersPane(layerModel, window))
    , details(new QTabWidget(window))
    , live(named(new LiveSetPane(window), "live"))
    , flame(named(new FlameGraphPane(window), "flame"))
    , block(named(new BlockPane(window), "block"))
    , allocator(named(new AllocatorPane(window), "allocator"))
    , kept(named(new KeptPane(window), "kept"))
    , runs(named(new RunsPane(window), "runs"))
    , pareto(named(new ParetoPane(window), "pareto"))
    , ranks(named(new RanksPane(window), "ranks"))
    , diff(named(new DiffPane(window), "compare"))
    , whatIfToolBar(named(window->addToolBar(QObject::tr("What-if")), "whatIf"))
    , whatIf(new WhatIfBar(window))
    , processSelector(named(new QComboBox(window), "processSelector"))
    , processSelectorAction(nullptr)
    , progress(new QProgressBar(window))
    , cancel(new QPushButton(QObject::tr("Cancel"), window))
{
    details->addTab(live, QObject::tr("&Live memory"));
    details->addTab(flame, QObject::tr("&Flame graph"));
    details->addTab(block, QObject::tr("&Block"));
    details->addTab(allocator, QObject::tr("&Allocator"));
    details->addTab(kept, QObject::tr("&Kept for backward"));
    details->addTab(runs, QObject::tr("R&uns"));
    details->addTab(pareto, QObject::tr("&Trade-offs"));
    ranks->hide(); // never loose in the window
    diff->hide();

    auto *bottom = named(new QSplitter(Qt::Horizontal, window), "layersAndDetails");
    bottom->addWidget(layers);
    bottom->addWidget(details);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);
    auto *main = named(new QSplitter(Qt::Vertical, window), "timelineAndBelow");
    main->addWidget(timeline);
    main->addWidget(bottom);
    main->setStretchFactor(0, 3);
    main->setStretchFactor(1, 2);
    main->setSizes({480, 400});
    bottom->setSizes({590, 810});
    notes->setWordWrap(true);
    notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notes->setContentsMargins(8, 2, 8, 2);
    notes->setVisible(false);
    auto *page = new QWidget(window);
    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(0, 0, 0, 0);
    pageLayout->setSpacing(0);
    pageLayout->addWidget(notes);
    pageLayout->addWidget(main, 1);
    pages->addWidget(emptyState);
    pages->addWidget(page);
    window->setCentralWidget(pages);

    whatIfToolBar->setMovable(false);
    whatIfToolBar->addWidget(whatIf);
    whatIf->setRerunAction(rerun);
    auto *processBox = new QWidget(window);
    auto *processLayout = new QHBoxLayout(processBox);
    processLayout->setContentsMargins(8, 0, 8, 0);
    processLayout->addWidget(new QLabel(QObject::tr("Process:"), processBox));
    processLayout->addWidget(processSelector);
    processSelector->setToolTip(QObject::tr("The traces opened together: one per rank or process of the run"));
    processSelectorAction = whatIfToolBar->addWidget(processBox);
    processSelectorAction->setVisible(false);

    progress->setMaximumWidth(260);
    window->statusBar()->addPermanentWidget(progress);
    window->statusBar()->addPermanentWidget(cancel);
    QObject::connect(block, &BlockPane::lifetimeRequested, timeline, &TimelineView::zoomTo);
    QObject::connect(layers, &LayersPane::layerSelected, timeline, &TimelineView::highlightLayer);
}

void WindowPanes::showProcesses(const std::vector<ProcessEntry> &processes)
{
    processSelector->clear();
    std::vector<RankOverview> overviews;
    for (const ProcessEntry &process : processes) {
        processSelector->addItem(process.label);
        overviews.push_back(process.overview);
    }
    const bool several = processes.size() > 1;
    processSelectorAction->setVisible(several);
    ranks->setTable(crossRankTable(std::move(overviews)));
    setTabShown(ranks, QObject::tr("Ran&ks"), several, 0);
    if (several)
        details->setCurrentWidget(ranks);
}

void WindowPanes::showCurrentProcess(int index)
{
    if (processSelector->currentIndex() != index)
        processSelector->setCurrentIndex(index);
    ranks->setCurrent(index);
}

void WindowPanes::showTracePage(bool shown)
{
    pages->setCurrentIndex(shown ? 1 : 0);
    whatIfToolBar->setVisible(shown); // nothing to plan before a trace is open
}

void WindowPanes::setTabShown(QWidget *pane, const QString &title, bool shown, int at)
{
    const int tab = details->indexOf(pane);
    if (shown && tab < 0)
        details->insertTab(at, pane, title);
    else if (!shown && tab >= 0)
        details->removeTab(tab);
}

void WindowPanes::showDetail(const QString &name)
{
    for (int tab = 0; tab < details->count(); ++tab) {
        if (details->widget(tab)->objectName() == name)
            details->setCurrentIndex(tab);
    }
}

void WindowPanes::showNotes(const QStringList &sentences)
{
    notes->setText(sentences.join(QLatin1Char(' ')));
    notes->setVisible(!sentences.isEmpty());
}

void WindowPanes::showBusy(bool busy)
{
    progress->setVisible(busy);
    cancel->setVisible(busy);
}

void WindowPanes::showProgress(std::optional<double> fraction)
{
    if (!fraction) {
        progress->setRange(0, 0);
        return;
    }
    progress->setRange(0, 1000);
    progress->setValue(static_cast<int>(*fraction * 1000));
}

} // namespace peaklens::gui
