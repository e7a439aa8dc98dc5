// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Runs table's rows and what makes them: the baseline row of the open trace, a rerun
// of the toggles (peaklens-replay, or the recorded command relaunched) from start to its
// measured row, the reruns kept beside the trace read back, and saving them elsewhere.
// The window shows its progress and passes on its signals.

#include "documentloader.h"
#include "runrecord.h"

#include <QObject>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QAction;
class QStatusBar;
class QWidget;

namespace peaklens::gui {

class LiveFollow;
class ReplayProcess;
class RunsModel;
class RunsPane;
class TimelineView;
class WhatIfController;

class RunsController final : public QObject
{
    Q_OBJECT

public:
    // Run traces are read with `loader`; messages go to `status`; dialogs open over `parent`.
    RunsController(DocumentLoader *loader, RunsPane *pane, WhatIfController *toggles, TimelineView *timeline, QStatusBar *status,
                   QWidget *parent);
    ~RunsController() override;

    // Another trace is open: a rerun still running is cancelled, rows being read dropped.
    void closeSession();
    // The table starts over with this document's baseline row (the same trace grown or
    // edited, or another).
    void showDocument(const DocumentPtr &document);
    // The reruns kept beside the open trace (runstore.h), read back into the table.
    void restoreKept();
    // Reruns the step with the toggles; rerunFinished follows.
    void rerun();
    void cancel();
    // A rerun runs, or its traces are being read.
    bool isRerunning() const;
    // The Rerun action: enabled when the open trace can be rerun now, its tip says why not
    // (`writing`: the trace's own run still writes it).
    void describeRerun(QAction *rerun, bool writing) const;
    // Before the window closes: reruns only in a temporary folder are saved where the user
    // picks, or let go; false when the user cancels.
    bool keepUnsaved();
    ReplayProcess *replay() const { return m_replay; }
    RunsModel *model() const;

Q_SIGNALS:
    void busy(const QString &message);
    void idle();
    // A rerun's row is in the table.
    void rerunFinished();
    // A rerun was saved beside `path` (the trace it reran): recent files list it with its runs.
    void saved(const QString &path);
    // The running rerun's trace grew: the comparison curve is drawn so far.
    void rerunGrown();

private:
    RunRecord baselineRow(const DocumentPtr &document) const;
    void onLoaded(quint64 ticket, DocumentLoader::Purpose purpose, const std::vector<DocumentPtr> &documents);
    void onLoadFailed(quint64 ticket, DocumentLoader::Purpose purpose, const QString &message, bool cancelled);
    void onRerunFinished(RunRecord record);
    void addRun(const RunRecord &record);
    void restoreNext();
    bool saveElsewhere(const std::vector<int> &rows);
    void showRun(int row);
    void followRerun(const QString &path);

    DocumentLoader *m_loader;
    RunsPane *m_pane;
    WhatIfController *m_toggles;
    TimelineView *m_timeline;
    QStatusBar *m_status;
    QWidget *m_parent;
    ReplayProcess *m_replay;
    DocumentPtr m_document;
    quint64 m_session = 0; // counts the traces opened; a rerun belongs to the one it started in
    quint64 m_rerunSession = 0;
    int m_rerunCount = 0;
    QString m_rerunLabel;
    std::unique_ptr<LiveFollow> m_rerunLive;    // the running rerun's trace
    std::map<quint64, RunRecord> m_readingRuns; // reruns whose traces are being read, by ticket
    // Reruns kept from an earlier session: the one being read, by ticket, and those after it.
    std::optional<std::pair<quint64, RunRecord>> m_restoring;
    std::deque<RunRecord> m_toRestore;
};

} // namespace peaklens::gui
