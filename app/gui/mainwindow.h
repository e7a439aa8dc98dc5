#pragma once
// The main window: timeline on top, layers with checkpoint toggles on the left, what is
// live at the peak (or a clicked time) on the right, the what-if bar above. Loading runs
// on a worker thread with progress and Cancel; errors are dialogs and the window stays.

#include "tracedocument.h"

#include "core/plan/planner.h"

#include <QFutureWatcher>
#include <QMainWindow>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTreeView;

namespace peaklens::gui {

class LayerEditor;
class LayerModel;
class LiveSetModel;
class LiveSetPane;
class RecordDialog;
class ReplayProcess;
class RunComparisonModel;
class RunsModel;
struct RunRecord;
class TimelineView;
class WhatIfBar;

class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Starts loading; documentLoaded or loadFailed follows.
    void openFile(const QString &path);
    // Opens several traces of one run (one per rank or process) with a selector between
    // them; the first is shown.
    void openFiles(const QStringList &paths);
    // The traces open together, and which one is shown.
    const std::vector<DocumentPtr> &processes() const { return m_processes; }
    void showProcess(int index);
    // File > Record…: the dialog that runs a command under the collector.
    RecordDialog *recordDialog();
    const DocumentPtr &document() const { return m_document; }
    // Shows the timeline stacked by layer instead of by category.
    void setGroupByLayer(bool byLayer);

    LayerModel *layerModel() const { return m_layers; }
    // Chain choice, renames and merges of layers; documentEdited follows each.
    LayerEditor *layerEditor() const { return m_layerEditor; }
    LiveSetModel *liveSetModel() const;
    WhatIfBar *whatIfBar() const { return m_whatIf; }
    TimelineView *timeline() const { return m_timeline; }
    RunsModel *runsModel() const { return m_runs; }
    RunComparisonModel *comparisonModel() const { return m_comparison; }
    // Toggles the layers a planner strategy chooses: none, all, every:K, sqrt.
    void setCheckpointStrategy(const QString &strategy);
    // Writes a report of the trace and its reruns (PDF, HTML, CSV or JSON by extension)
    // on a worker thread; reportExported follows.
    void exportReportTo(const QString &path);
    // Selects a layer by path in the layers view (and highlights it on the timeline).
    void selectLayer(const QString &path);
    // Reruns the step with the current toggles (peaklens-replay as a child process).
    void rerun();

Q_SIGNALS:
    void documentLoaded();
    void documentEdited();
    void loadFailed(const QString &message);
    void rerunFinished();
    void reportExported(const QString &path, const QString &problem);

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    // Ticks a plan's layers without marking the toggles custom, and keeps its units.
    void showSchedule(const Plan &plan);
    void createActions();
    void showDocument(const DocumentPtr &document);
    void showLiveSet(std::optional<std::int64_t> timeNs);
    void applyStrategy();
    void updatePrediction();
    void showRangeStats(std::int64_t beginNs, std::int64_t endNs);
    void rememberRecent(const QString &path);
    void rebuildRecentMenu();
    void setLoading(bool loading);
    void onRerunFinished(const RunRecord &record);
    void compareWithRun(int row);
    void updateRerunAction();
    void stopLoading();

    DocumentPtr m_document;
    TimelineView *m_timeline;
    WhatIfBar *m_whatIf;
    LayerModel *m_layers;
    // What the what-if predicts and a rerun runs: the ticked layers one by one, or the
    // units of the strategy or plan last applied (segments tick all their layers).
    CheckpointSchedule m_schedule;
    QSortFilterProxyModel *m_layerProxy;
    QTreeView *m_layerView;
    QLineEdit *m_layerFilter;
    LiveSetPane *m_livePane;
    LayerEditor *m_layerEditor;
    QProgressBar *m_progress;
    QPushButton *m_cancel;
    QTabWidget *m_detailTabs;
    RunsModel *m_runs;
    QTableView *m_runsView;
    RunComparisonModel *m_comparison;
    QTableView *m_comparisonView;
    ReplayProcess *m_replay;
    QAction *m_rerunAction = nullptr;
    int m_rerunCount = 0;
    QMenu *m_recentMenu = nullptr;
    QAction *m_byLayerAction = nullptr;
    std::optional<std::int64_t> m_pickedTime;

    std::vector<DocumentPtr> m_processes; // every trace opened together
    QComboBox *m_processSelector;
    QAction *m_processSelectorAction = nullptr;
    RecordDialog *m_recordDialog = nullptr;

    QFutureWatcher<std::vector<DocumentPtr>> m_loader;
    QFutureWatcher<QString> m_exporter; // empty result: written; else why not
    std::shared_ptr<std::atomic<bool>> m_cancelFlag;
    QStringList m_loadingPaths;
};

} // namespace peaklens::gui
