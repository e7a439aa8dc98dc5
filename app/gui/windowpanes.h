// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window's widgets and how they are laid out: the notes and the timeline over the
// layers and the detail tabs; the what-if bar and the process selector in a tool bar; the
// progress and Cancel in the status bar; the empty state before a trace is open. Built
// once, with the window; the window connects them and fills them.

#include <QStringList>

#include <optional>
#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QMainWindow;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTabWidget;
class QToolBar;
class QWidget;

namespace peaklens::gui {

struct ProcessEntry;
class AllocatorPane;
class BlockPane;
class DiffPane;
class EmptyState;
class FlameGraphPane;
class KeptPane;
class LayerModel;
class LayersPane;
class LiveSetPane;
class RanksPane;
class RunsPane;
class ParetoPane;
class TimelineView;
class WhatIfBar;

struct WindowPanes
{
    // The empty state offers `open` and `record`; the what-if bar holds `rerun`.
    WindowPanes(QMainWindow *window, LayerModel *layerModel, QAction *open, QAction *record, QAction *rerun);

    // The trace's page, or the empty state when none is open.
    void showTracePage(bool shown);
    // The traces opened together in the process selector and the Ranks tab, shown while
    // there are several; and which of them is shown.
    void showProcesses(const std::vector<ProcessEntry> &processes);
    void showCurrentProcess(int index);
    // A detail tab that exists only for a while (the ranks, a comparison); `at` -1 appends.
    void setTabShown(QWidget *pane, const QString &title, bool shown, int at = -1);
    // Brings a detail tab forward by its pane's object name ("flame", "block", …).
    void showDetail(const QString &name);
    // Whole sentences over the timeline, wrapped, never cut; none hides them.
    void showNotes(const QStringList &sentences);
    // The progress bar and Cancel, shown while busy.
    void showBusy(bool busy);
    // How far the work is, or that it runs without a known end (none).
    void showProgress(std::optional<double> fraction);

    QStackedWidget *pages;
    EmptyState *emptyState;
    QLabel *notes;
    TimelineView *timeline;
    LayersPane *layers;
    QTabWidget *details;
    LiveSetPane *live;
    FlameGraphPane *flame;
    BlockPane *block;
    AllocatorPane *allocator;
    KeptPane *kept;
    RunsPane *runs;
    ParetoPane *pareto; // peak against step time over budgets
    RanksPane *ranks;   // a tab only while several processes are open
    DiffPane *diff;     // a tab only while a comparison is shown
    QToolBar *whatIfToolBar;
    WhatIfBar *whatIf;
    QComboBox *processSelector;
    QAction *processSelectorAction;
    QProgressBar *progress;
    QPushButton *cancel;
};

} // namespace peaklens::gui
