// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window: timeline on top, layers with checkpoint toggles on the left, what is
// live at the peak (or a clicked time) and the runs on the right, the what-if bar above.
// Everything that belongs to the open trace is one Session, replaced whole when another
// file opens, so no pane can keep the previous trace's content. Reading runs on the
// loader's worker threads with progress and Cancel; errors are dialogs and the window stays.

#include "documentloader.h"
#include "jobs.h"
#include "runrecord.h"

#include "core/analysis/flamegraph.h"
#include "core/plan/planner.h"

#include <QMainWindow>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QStackedWidget;
class QTabWidget;
class QToolButton;
class QTreeView;

namespace peaklens::gui {

class AllocatorPane;
class BlockPane;
class DiffPane;
class EmptyState;
class RanksPane;
class FlameGraphPane;
class LayerEditor;
class LayerModel;
class LiveController;
class LiveFollow;
class LiveSetModel;
struct LiveStatus;
class LiveSetPane;
class RecordDialog;
class ReplayProcess;
class RunsController;
class RunComparisonModel;
class RunsModel;
class RunsPane;
class TimelineView;
class WhatIfBar;
class WhatIfController;

class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Starts loading; documentLoaded or loadFailed follows.
    void openFile(const QString &path);
    // Opens several traces of one run (one per rank or process) with a selector between
    // them and the cross-rank overview; the first rank is shown.
    void openFiles(const QStringList &paths);
    // The traces open together, ranks in order, and which one is shown: another is read
    // when chosen (documentLoaded follows).
    const std::vector<ProcessEntry> &processes() const { return m_session.processes; }
    void showProcess(int index);
    RanksPane *ranksPane() const { return m_ranksPane; }
    // Compares the open trace with another at their peaks (File > Compare with…): the
    // Compare pane and B's curve over the timeline; comparisonShown follows.
    void compareWith(const QString &path);
    void closeComparison();
    DiffPane *diffPane() const { return m_diffPane; }
    AllocatorPane *allocatorPane() const { return m_allocatorPane; }
    // File > Record…: the dialog that runs a command under the collector.
    RecordDialog *recordDialog();
    const DocumentPtr &document() const { return m_session.document; }
    // Shows the timeline stacked by layer instead of by category.
    void setGroupByLayer(bool byLayer);

    LayerModel *layerModel() const { return m_layers; }
    // Chain choice, renames and merges of layers; documentEdited follows each.
    LayerEditor *layerEditor() const { return m_layerEditor; }
    LiveSetModel *liveSetModel() const;
    WhatIfBar *whatIfBar() const { return m_whatIf; }
    TimelineView *timeline() const { return m_timeline; }
    RunsModel *runsModel() const;
    RunComparisonModel *comparisonModel() const;
    RunsPane *runsPane() const { return m_runsPane; }
    BlockPane *blockPane() const { return m_blockPane; }
    FlameGraphPane *flameGraphPane() const { return m_flamePane; }
    // Toggles the layers a planner strategy chooses: none, all, every:K, sqrt.
    void setCheckpointStrategy(const QString &strategy);
    // Writes a report of the trace and its reruns (PDF, HTML, CSV or JSON by extension)
    // on a worker thread; reportExported follows.
    void exportReportTo(const QString &path);
    // Selects a layer by path in the layers view (and highlights it on the timeline).
    void selectLayer(const QString &path);
    // What a click on the timeline does: the live set, the flame graph (and the allocator's
    // state) at that time, or at the peak when none; with a height, the block drawn there
    // is pinned as well.
    void pickTime(std::optional<std::int64_t> timeNs, std::optional<std::int64_t> heightBytes = std::nullopt);
    // Brings a pane of the detail tabs forward by its object name ("flameGraph", "block", …).
    void showDetail(const QString &name);
    void showNotes(const QStringList &sentences);
    // Reruns the step with the current toggles (peaklens-replay as a child process).
    void rerun();
    // Stops whatever is running for the window: a load, a rerun.
    void cancel();
    // Follows the open trace while its writer appends to it (a file opened while written,
    // a recording as soon as it starts): the views grow with it, the status line says the
    // peak so far and the step and phase being recorded, a "Live" badge shows. Ends by
    // itself when the writer finishes or stops; liveEnded follows.
    void followLive(const QString &path);
    // Asks the followed trace's writer to stop (SIGTERM to its process, on this machine):
    // the collector and peaklens-cli record finish the file, anything else leaves what it
    // committed readable. The window keeps following until the writer has gone, then the
    // toggles can be picked on what was recorded and the run relaunched (Rerun).
    // Returns why it cannot, or empty once asked.
    QString stopFollowedRun();
    // The trace being followed, or null.
    LiveFollow *liveFollow() const;
    QLabel *liveBadge() const;
    // What the what-if rests on, why there is none, or what a state-only snapshot says:
    // whole sentences over the timeline, wrapped, never cut.
    QLabel *notes() const { return m_notes; }
    // Shown while a followed run's step came near the device's memory; a click ticks the
    // planner's cheapest toggles for the margin.
    QToolButton *headroomButton() const;
    bool isRerunning() const;

Q_SIGNALS:
    void documentLoaded();
    void documentEdited();
    void loadFailed(const QString &message);
    void comparisonShown();
    void rerunFinished();
    // A document of the followed trace was shown (the views grew).
    void liveUpdated();
    void liveEnded();
    void reportExported(const QString &path, const QString &problem);

protected:
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    // What belongs to the open trace, replaced whole when another opens.
    struct Session
    {
        quint64 id = 0;
        DocumentPtr document;
        std::vector<ProcessEntry> processes; // every trace opened together
        std::optional<std::int64_t> pickedTime;
    };

    void createActions();
    void createPanes();
    void connectServices();
    void onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents,
                  const std::vector<ProcessEntry> &processes);
    void onLoadFailed(quint64 ticket, DocumentLoader::Purpose purpose, const QString &message, bool cancelled);
    void startSession(DocumentPtr document, std::vector<ProcessEntry> processes);
    // Resets every pane from the session's document; `grown`: the same trace followed
    // while written, so the view, the picked time and the toggles stay.
    void showDocument(const DocumentPtr &document, bool grown = false);
    void showLiveSet(std::optional<std::int64_t> timeNs);
    // Pins a block of the document's index (or none) on the timeline and in the Block pane.
    void pinBlock(std::optional<std::size_t> block);
    void showRangeStats(std::int64_t beginNs, std::int64_t endNs);
    // The window's geometry and splitter sizes, kept in QSettings from one session to the next.
    void restoreWindowState();
    void saveWindowState() const;
    void rememberRecent(const QString &path);
    void rebuildRecentMenu();
    void setBusy(const QString &message);
    void setIdle();
    void showComparison(const DocumentPtr &other);
    void showFlameSelection(const std::optional<FlameSelection> &selection, const QString &name);
    void updateRerunAction();

    Session m_session;
    quint64 m_nextSession = 1;
    quint64 m_openTicket = 0;    // the files being opened
    QStringList m_openRequest;   // and the paths they were asked for by (a folder, say)
    quint64 m_processTicket = 0; // another process of the session being read
    quint64 m_compareTicket = 0; // a trace to compare with being read

    QStackedWidget *m_pages;
    EmptyState *m_emptyState = nullptr;
    TimelineView *m_timeline;
    WhatIfBar *m_whatIf;
    LayerModel *m_layers;
    WhatIfController *m_toggles; // the one owner of the toggles
    QSortFilterProxyModel *m_layerProxy;
    QTreeView *m_layerView;
    QLineEdit *m_layerFilter;
    LiveSetPane *m_livePane;
    BlockPane *m_blockPane;
    FlameGraphPane *m_flamePane;
    RanksPane *m_ranksPane;
    DiffPane *m_diffPane;
    AllocatorPane *m_allocatorPane;
    LayerEditor *m_layerEditor;
    QProgressBar *m_progress;
    QPushButton *m_cancel;
    QTabWidget *m_detailTabs;
    RunsPane *m_runsPane;
    DocumentLoader *m_loader;
    QAction *m_openAction = nullptr;
    QAction *m_recordAction = nullptr;
    QAction *m_rerunAction = nullptr;
    QMenu *m_recentMenu = nullptr;
    QAction *m_byCategoryAction = nullptr;
    QAction *m_byLayerAction = nullptr;
    QComboBox *m_processSelector;
    QAction *m_processSelectorAction = nullptr;
    RecordDialog *m_recordDialog = nullptr;
    Jobs m_exportJobs;
    // The memory of the blocks under the flame graph's selected frame, over the whole trace.
    Jobs m_selectionJobs;
    LiveController *m_live; // the open trace followed while written
    RunsController *m_runs; // the Runs table's rows and reruns
    QLabel *m_notes = nullptr;
};

} // namespace peaklens::gui
