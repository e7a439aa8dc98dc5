#pragma once
// Reruns a trace with new checkpoint toggles as a child process and hands back what it
// measured (or its out-of-memory result, or why it failed). A replayed trace runs
// peaklens-replay with its spec and options, measuring the baseline's toggles again beside
// the new ones step by step, and follows its JSON-lines progress. A recorded trace
// relaunches its command under `peaklens-cli record` in its working directory twice, with
// the baseline's toggles and then the new ones in PEAKLENS_CHECKPOINT. A crash or OOM in
// the child never touches the app, and nothing here waits on the UI thread: traces are
// read by the window's loader, a cancelled child gets SIGTERM and, if it lingers, SIGKILL.

#include "runrecord.h"

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
    void startReplay(const TraceDocument &document);
    void startRelaunch(const QString &toggles, const QString &folder);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void takeReplayResult(int exitCode);
    bool takeRecording(int exitCode, const QString &folder);
    void finish();
    // Announces the toggled run's trace once it is there.
    void announceTrace();

    // Of a relaunched trace: its command, folder, rank and allocator; the baseline's toggles.
    QStringList m_command;
    QString m_workingDirectory, m_rank, m_allocator, m_baselineToggles;
    bool m_relaunch = false;
    bool m_relaunchingBaseline = false; // the first of the two relaunches
    QProcess *m_process = nullptr;
    RunRecord m_record;
    QByteArray m_stderrTail;
    bool m_cancelled = false;
    bool m_traceAnnounced = false;
};

} // namespace peaklens::gui
