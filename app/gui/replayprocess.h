// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reruns a trace with new checkpoint toggles as child processes, the ones planRerun
// (core/plan/rerunlaunch.h) names, as `peaklens-cli rerun` does, and hands back what they
// measured (or the out-of-memory result, or why they failed). A replay's JSON-lines
// progress is followed; a relaunch's traces are read back by the window. A crash or OOM in
// the child never touches the app, and nothing here waits on the UI thread: traces are
// read by the window's loader, a cancelled child gets SIGTERM and, if it lingers, SIGKILL.
// A trace opened from a host (ssh://HOST/PATH), or copied from one by `record --host`, is
// rerun on that host through `peaklens-cli rerun`, its traces copied into the run's folder
// here as they grow.

#include "runrecord.h"

#include "core/plan/rerunlaunch.h"

#include <QObject>
#include <QProcess>

namespace peaklens::gui {

class ReplayProcess final : public QObject
{
    Q_OBJECT

public:
    explicit ReplayProcess(QObject *parent = nullptr);
    // Stops a running child without telling anyone: the window is going away.
    ~ReplayProcess() override;

    // Where a program of ours is (peaklens-replay, peaklens-cli): PEAKLENS_PLUGIN_DIR, else
    // next to the app. Empty if absent.
    static QString executable(const QString &name = QStringLiteral("peaklens-replay"));
    // Where a document's trace lies on a host, to be rerun there: its own ssh:// path, or the
    // one its copy remembers (originOf); empty for a trace of this machine.
    static QString hostPath(const TraceDocument &document);
    // Why a document cannot be rerun (no replay spec or command, no engine), or empty when it can.
    static QString unavailableReason(const TraceDocument &document);

    bool isRunning() const;
    // `record` carries the label, toggles and prediction; the measurement is filled in.
    void start(const TraceDocument &document, const RunRecord &record);
    // Asks the child to stop; finished follows with the outcome "cancelled".
    void cancel();

Q_SIGNALS:
    // steps is 0 while the child's progress is unknown (a relaunched training script).
    void progress(int step, int steps);
    // The trace of the toggled run exists and holds its first commit: it can be followed
    // while the child writes it (a relaunch's, once the baseline's has been recorded).
    void traceStarted(const QString &path);
    // The record's tracePaths name the traces left to read; measured holds what the child
    // printed (peaklens-replay) or nothing yet (relaunches: the traces say it).
    void finished(const peaklens::gui::RunRecord &record);

private:
    void startLaunch(QProcess::ProcessChannelMode channels);
    void startReplay();
    void startRelaunch();
    // A trace on another machine (ssh://HOST/PATH) is rerun there, by `peaklens-cli rerun`.
    void startOnHost(const QString &path);
    void takeHostRerun(int exitCode);
    void followOutput();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void takeReplayResult(int exitCode);
    bool takeRecording(int exitCode);
    bool relaunchingBaseline() const; // the first of a relaunch's two runs
    void finish();
    // Announces the toggled run's trace once it is there.
    void announceTrace();

    RerunPlan m_plan;
    std::size_t m_launch = 0; // which of m_plan.launches runs
    QProcess *m_process = nullptr;
    RunRecord m_record;
    QByteArray m_stderrTail;
    bool m_cancelled = false;
    bool m_traceAnnounced = false;
    bool m_onHost = false;
};

} // namespace peaklens::gui
