// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File > Record…: runs a training command under `peaklens-cli record` (the CUPTI
// collector and the Python helper), shows its output live, and hands back the traces it
// left, one per process, for the window to open; the first as soon as it is being written,
// for the window to follow. Closing or Cancel stops the command. With a host, the command
// runs there (`record --host`, over ssh) and its traces are copied here as they grow.

#include <QDialog>
#include <QProcess>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QTimer;

namespace peaklens::gui {

class RecordDialog final : public QDialog
{
    Q_OBJECT

public:
    explicit RecordDialog(QWidget *parent = nullptr);
    ~RecordDialog() override;

    void setCommand(const QString &command, const QString &workingDirectory);
    // An SSH destination to record on (user@host, an alias from ~/.ssh/config); empty: here.
    void setHost(const QString &host);
    // Starts recording with what the fields say; the Record button does the same.
    void startRecording();
    bool isRecording() const;
    // The command's output and peaklens-cli's messages so far.
    QString log() const;

Q_SIGNALS:
    // The run's first trace has its first commit: the window can follow it while it is written.
    void started(const QString &trace);
    // Every *.peaklens the run left, sorted by name (rank0-…, rank1-…); `problem`: what
    // went wrong on the way (a connection to the host cut: the traces hold what arrived).
    void recorded(const QStringList &traces, const QString &problem);
    // The run ended without a trace; `message` says why (the last line it printed).
    void failed(const QString &message);

protected:
    void reject() override;

private:
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void setRunning(bool running);
    void lookForTrace();

    QLineEdit *m_command;
    QLineEdit *m_host;
    QLineEdit *m_workingDirectory;
    QPushButton *m_browse;
    QComboBox *m_backend;
    QPlainTextEdit *m_log;
    QProgressBar *m_busy;
    QLabel *m_status;
    QDialogButtonBox *m_buttons;
    QPushButton *m_record;
    QProcess *m_process = nullptr;
    QString m_outDirectory;
    QString m_lastLine;
    QTimer *m_lookForTrace;
};

} // namespace peaklens::gui
