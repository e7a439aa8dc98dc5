#pragma once
// Reruns a trace with new checkpoint toggles as a child process and hands back the
// measured run (or its out-of-memory result, or why it failed). A replayed trace runs
// peaklens-replay with its spec and options and follows its JSON-lines progress; a recorded
// trace relaunches its command under `peaklens-cli record` in its working directory with
// PEAKLENS_CHECKPOINT set to the toggles. A crash or OOM in the child never touches the app.

#include "tracedocument.h"

#include <QObject>
#include <QProcess>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace peaklens::gui {

struct RunRecord
{
    QString label;                      // "baseline", "rerun 1"
    QStringList checkpoint;
    std::int64_t predictedPeakBytes = 0;
    std::int64_t predictedStepNs = 0;
    std::optional<std::int64_t> measuredPeakBytes;
    std::optional<double> measuredStepMs;
    // The rerun's gradients against a plain step's (peaklens-replay --verify-gradients):
    // the largest difference relative to the largest gradient, and whether it is within rounding.
    std::optional<double> gradientDifference;
    bool gradientsAgree = true;
    QString outcome;                    // empty when measured; else OOM or failure sentence
    DocumentPtr document;               // the run's own trace, when it wrote one
};

class ReplayProcess final : public QObject
{
    Q_OBJECT

public:
    explicit ReplayProcess(QObject *parent = nullptr);
    ~ReplayProcess() override;

    // Where a program of ours is (peaklens-replay, peaklens-cli): PEAKLENS_PLUGIN_DIR, else
    // next to the app. Empty if absent.
    static QString executable(const QString &name = QStringLiteral("peaklens-replay"));
    // Why a document cannot be rerun (no replay spec or command, no engine), or empty when it can.
    static QString unavailableReason(const TraceDocument &document);

    bool isRunning() const;
    // `record` carries the label, toggles and prediction; the measurement is filled in.
    void start(const TraceDocument &document, const RunRecord &record);
    void cancel();

Q_SIGNALS:
    // steps is 0 while the child's progress is unknown (a relaunched training script).
    void progress(int step, int steps);
    void finished(const peaklens::gui::RunRecord &record);

private:
    void startReplay(const TraceDocument &document, const RunRecord &record);
    void startRelaunch(const TraceDocument &document, const RunRecord &record);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void takeReplayResult(int exitCode);
    void takeRecording(int exitCode);

    QString m_rank;   // of the relaunched trace: which of the new files to compare with
    bool m_relaunch = false;
    QProcess *m_process = nullptr;
    std::unique_ptr<QTemporaryDir> m_directory;
    RunRecord m_record;
    QByteArray m_stderrTail;
    bool m_cancelled = false;
};

} // namespace peaklens::gui
