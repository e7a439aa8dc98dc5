// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window: timeline on top, layers with checkpoint toggles on the left, what is
// live at the peak (or a clicked time) and the runs on the right, the what-if bar above.
// Everything that belongs to the open trace is one Session, replaced whole when another
// file opens, so no pane can keep the previous trace's content. Reading runs on the
// loader's worker threads with progress and Cancel; errors are dialogs and the window stays.

#include "documentloader.h"
#include "windowmenus.h"
#include "windowpanes.h"

#include "core/analysis/flamegraph.h"

#include <QMainWindow>

#include <memory>
#include <optional>
#include <vector>

namespace peaklens::gui {

class LayerEditor;
class LayerModel;
class LiveController;
class RecordDialog;
class ReportWriter;
class RunsController;
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
    // Compares the open trace with another at their peaks (File > Compare with…): the
    // Compare pane and B's curve over the timeline; comparisonShown follows.
    void compareWith(const QString &path);
    // A document that is a window of a file too big to hold (more events than a document
    // may): read the window that begins at `fromNs` (on the trace's clock) in its place.
    void loadWindowFrom(std::int64_t fromNs);
    bool isWindow() const;
    void closeComparison();
    // File > Record…: the dialog that runs a command under the collector.
    RecordDialog *recordDialog();
    const DocumentPtr &document() const { return m_session.document; }
    // Stacks the timeline by category, layer, memory pool or stream; by category where the
    // document has no such bands (no layers, one pool, one stream).
    void setGrouping(GroupBy groupBy);
    GroupBy grouping() const;
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
    // Brings a pane of the detail tabs forward by its object name ("flame", "block", …).
    void showDetail(const QString &name) { m_panes.showDetail(name); }
    // Reruns the step with the current toggles (peaklens-replay as a child process).
    void rerun();
    // Run > Plan for One Rank of a Sharded Run…: the open trace as one rank of `degree`
    // sharding it at ZeRO stage `stage` holds it (documentEdited follows); without
    // arguments, asks for them.
    void planShardedRank(int degree, int stage);
    void askForShardedRank();
    // Stops whatever is running for the window: a load, a rerun.
    void cancel();

    // The panes, as laid out.
    LayerModel *layerModel() const { return m_layers; }
    LayersPane *layersPane() const { return m_panes.layers; }
    TimelineView *timeline() const { return m_panes.timeline; }
    WhatIfBar *whatIfBar() const { return m_panes.whatIf; }
    RunsPane *runsPane() const { return m_panes.runs; }
    BlockPane *blockPane() const { return m_panes.block; }
    FlameGraphPane *flameGraphPane() const { return m_panes.flame; }
    RanksPane *ranksPane() const { return m_panes.ranks; }
    DiffPane *diffPane() const { return m_panes.diff; }
    AllocatorPane *allocatorPane() const { return m_panes.allocator; }
    // What the what-if rests on, why there is none, or what a state-only snapshot says:
    // whole sentences over the timeline, wrapped, never cut.
    QLabel *notes() const { return m_panes.notes; }
    // Chain choice, renames and merges of layers; documentEdited follows each.
    LayerEditor *layerEditor() const { return m_layerEditor; }
    // The open trace followed while its run writes it (a file opened while written, a
    // recording as soon as it starts): the views grow with it, the status line says the peak
    // so far, a "Live" badge shows; liveEnded follows its end.
    LiveController *live() const { return m_live; }
    // The Runs table's rows: the reruns, their traces, the ones kept beside the trace.
    RunsController *runs() const { return m_runs; }

Q_SIGNALS:
    void documentLoaded();
    // A big file's overview, drawn from its running totals before its events are read.
    void overviewShown();
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
        DocumentPtr document;
        std::vector<ProcessEntry> processes; // every trace opened together
        std::optional<std::int64_t> pickedTime;
    };
    // The loads the window waits for: an older one's result is dropped.
    struct Tickets
    {
        quint64 open = 0;        // the files being opened
        QStringList openRequest; // and the paths they were asked for by (a folder, say)
        quint64 process = 0;     // another process of the session being read
        quint64 compare = 0;     // a trace to compare with being read
    };
    void connectPanes();
    void connectServices();
    void onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents,
                  const std::vector<ProcessEntry> &processes);
    void onLoadFailed(quint64 ticket, DocumentLoader::Purpose purpose, const QString &message, bool cancelled);
    void onOverviewRead(quint64 ticket, const std::shared_ptr<const FileOverview> &overview);
    // How the overview's band is named in the legend.
    static QString overviewName(const FileOverview &overview);
    void startSession(DocumentPtr document, std::vector<ProcessEntry> processes);
    // Resets every pane from the session's document; `grown`: the same trace followed
    // while written, so the view, the picked time and the toggles stay.
    void showDocument(const DocumentPtr &document, bool grown = false);
    void showLiveSet(std::optional<std::int64_t> timeNs);
    // Pins a block of the document's index (or none) on the timeline and in the Block pane.
    void pinBlock(std::optional<std::size_t> block);
    void showRangeStats(std::int64_t beginNs, std::int64_t endNs);
    void setBusy(const QString &message);
    void setIdle();
    void showComparison(const DocumentPtr &other);
    void updateRerunAction();

    Session m_session;
    Tickets m_tickets;
    // The overview of the file being opened, drawn behind its document when that is a window.
    std::shared_ptr<const FileOverview> m_overview;
    DocumentPtr m_compared; // the trace the open one is compared with, while it is
    DocumentLoader *m_loader;
    LayerModel *m_layers;
    LiveController *m_live;
    WindowActions m_actions; // before the panes, which show some
    WindowPanes m_panes;
    WhatIfController *m_toggles; // the one owner of the toggles
    LayerEditor *m_layerEditor;
    RunsController *m_runs;
    ReportWriter *m_report;
    RecordDialog *m_recordDialog = nullptr;
};

} // namespace peaklens::gui
