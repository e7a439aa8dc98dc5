// SPDX-License-Identifier: GPL-3.0-or-later
#include "recorddialog.h"

#include "replayprocess.h"

#include "core/error.h"
#include "core/format/tracefollower.h"

#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTextCursor>
#include <QTimer>
#include <QVBoxLayout>

namespace peaklens::gui {

RecordDialog::RecordDialog(QWidget *parent)
    : QDialog(parent)
    , m_command(new QLineEdit(this))
    , m_host(new QLineEdit(this))
    , m_workingDirectory(new QLineEdit(QDir::currentPath(), this))
    , m_browse(new QPushButton(tr("Browse…"), this))
    , m_backend(new QComboBox(this))
    , m_log(new QPlainTextEdit(this))
    , m_busy(new QProgressBar(this))
    , m_status(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Cancel, this))
    , m_lookForTrace(new QTimer(this))
{
    m_lookForTrace->setInterval(250);
    connect(m_lookForTrace, &QTimer::timeout, this, &RecordDialog::lookForTrace);
    setWindowTitle(tr("Record a training run"));
    m_command->setObjectName(QStringLiteral("command"));
    m_command->setPlaceholderText(tr("python3 train.py --epochs 1"));
    m_command->setToolTip(tr("The training command. The script calls peaklens.instrument(model) to name its layers."));
    m_host->setObjectName(QStringLiteral("host"));
    m_host->setPlaceholderText(tr("this machine"));
    m_host->setToolTip(tr("Record on a GPU server: an SSH destination (user@host, or an alias from ~/.ssh/config) with "
                          "PeakLens installed. The command and working directory are the server's; the traces are "
                          "copied here as they are written."));
    // The working directory is the host's there: nothing here to browse.
    connect(m_host, &QLineEdit::textChanged, this,
            [this](const QString &host) { m_browse->setEnabled(host.trimmed().isEmpty()); });
    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString directory = QFileDialog::getExistingDirectory(this, tr("Working directory"), m_workingDirectory->text());
        if (!directory.isEmpty())
            m_workingDirectory->setText(directory);
    });
    auto *directoryRow = new QHBoxLayout;
    directoryRow->addWidget(m_workingDirectory, 1);
    directoryRow->addWidget(m_browse);

    // What `record` records through: PyTorch's own allocator, or the CUPTI collector in one
    // of its allocator modes ("cupti:MODE").
    const struct
    {
        const char *backend;
        const char *label;
        const char *tip;
    } backends[] = {
        {"torch", QT_TR_NOOP("PyTorch's allocator: every tensor, any machine"),
         QT_TR_NOOP("--backend torch: PyTorch reports each block it hands out, on the CPU or a GPU; the caching allocator stays "
                    "as it is")},
        {"cupti:exact", QT_TR_NOOP("CUPTI, exact: every tensor (no caching)"),
         QT_TR_NOOP("PYTORCH_NO_CUDA_MEMORY_CACHING=1: each tensor is a cudaMalloc the collector sees; slower; needs a GPU")},
        {"cupti:async", QT_TR_NOOP("CUPTI, async: cudaMallocAsync"),
         QT_TR_NOOP("PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync: tensors and the pool, near full speed; needs a GPU")},
        {"cupti:native", QT_TR_NOOP("CUPTI, native: the caching allocator's segments"),
         QT_TR_NOOP("PyTorch unchanged: only segments are seen, shown as reserved memory; needs a GPU")},
    };
    m_backend->setObjectName(QStringLiteral("backend"));
    for (const auto &backend : backends) {
        m_backend->addItem(tr(backend.label), QLatin1String(backend.backend));
        m_backend->setItemData(m_backend->count() - 1, tr(backend.tip), Qt::ToolTipRole);
    }

    auto *form = new QFormLayout;
    form->addRow(tr("&Command:"), m_command);
    form->addRow(tr("&Host:"), m_host);
    auto *directoryLabel = new QLabel(tr("&Working directory:"), this);
    directoryLabel->setBuddy(m_workingDirectory);
    form->addRow(directoryLabel, directoryRow);
    form->addRow(tr("Record &through:"), m_backend);

    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_log->setPlaceholderText(tr("The command's output appears here."));
    m_busy->setRange(0, 0);
    m_busy->setVisible(false);

    m_record = m_buttons->addButton(tr("&Record"), QDialogButtonBox::AcceptRole);
    m_record->setDefault(true);
    connect(m_record, &QPushButton::clicked, this, &RecordDialog::startRecording);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &RecordDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_log, 1);
    auto *statusRow = new QHBoxLayout;
    statusRow->addWidget(m_status, 1);
    statusRow->addWidget(m_busy);
    layout->addLayout(statusRow);
    layout->addWidget(m_buttons);
    resize(760, 460);

    // The last recording's settings, to rerecord after a change to the script.
    const QSettings settings;
    m_command->setText(settings.value(QStringLiteral("record/command")).toString());
    m_host->setText(settings.value(QStringLiteral("record/host")).toString());
    const QString directory = settings.value(QStringLiteral("record/directory")).toString();
    if (!directory.isEmpty() && (!m_host->text().isEmpty() || QDir(directory).exists()))
        m_workingDirectory->setText(directory);
    const int mode = m_backend->findData(settings.value(QStringLiteral("record/backend")));
    if (mode >= 0)
        m_backend->setCurrentIndex(mode);
}

RecordDialog::~RecordDialog()
{
    if (isRecording()) {
        // Nobody is left to hand the traces to: stop the command without a word.
        m_process->disconnect(this);
        m_process->terminate();
        if (!m_process->waitForFinished(5000))
            m_process->kill();
    }
}

void RecordDialog::setCommand(const QString &command, const QString &workingDirectory)
{
    m_command->setText(command);
    m_workingDirectory->setText(workingDirectory);
}

void RecordDialog::setHost(const QString &host)
{
    m_host->setText(host);
}

bool RecordDialog::isRecording() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

QString RecordDialog::log() const
{
    return m_log->toPlainText();
}

void RecordDialog::startRecording()
{
    if (isRecording())
        return;
    const QStringList command = QProcess::splitCommand(m_command->text());
    const QString cli = ReplayProcess::executable(QStringLiteral("peaklens-cli"));
    const QString host = m_host->text().trimmed();
    const QDir directory(m_workingDirectory->text());
    if (command.isEmpty() || cli.isEmpty() || (host.isEmpty() && !directory.exists())) {
        m_status->setText(command.isEmpty() ? tr("Enter the training command.")
                          : cli.isEmpty()   ? tr("peaklens-cli is not installed next to the app.")
                                            : tr("The working directory %1 does not exist.").arg(directory.path()));
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("record/command"), m_command->text());
    settings.setValue(QStringLiteral("record/host"), host);
    settings.setValue(QStringLiteral("record/directory"), host.isEmpty() ? directory.absolutePath() : directory.path());
    settings.setValue(QStringLiteral("record/backend"), m_backend->currentData());
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    // From a host, the copies go where the app keeps its recordings; the host keeps its own.
    m_outDirectory = host.isEmpty() ? directory.filePath(QStringLiteral("peaklens-") + stamp)
                                    : QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                                          .filePath(QStringLiteral("recordings/%1-%2").arg(host, stamp));
    m_log->clear();
    m_lastLine.clear();
    m_process = new QProcess(this);
    if (host.isEmpty())
        m_process->setWorkingDirectory(directory.path());
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::readyRead, this, [this] {
        const QString text = QString::fromUtf8(m_process->readAll());
        m_log->moveCursor(QTextCursor::End);
        m_log->insertPlainText(text);
        const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        if (!lines.isEmpty())
            m_lastLine = lines.last().trimmed();
    });
    connect(m_process, &QProcess::finished, this, &RecordDialog::onFinished);
    const QString backend = m_backend->currentData().toString();
    QStringList arguments{QStringLiteral("record"), QStringLiteral("--backend"), backend.section(QLatin1Char(':'), 0, 0)};
    if (backend.contains(QLatin1Char(':')))
        arguments << QStringLiteral("--allocator") << backend.section(QLatin1Char(':'), 1);
    if (!host.isEmpty())
        arguments << QStringLiteral("--host") << host << QStringLiteral("--directory") << directory.path();
    m_process->start(cli, arguments + QStringList{QStringLiteral("--out"), m_outDirectory, QStringLiteral("--")} + command);
    m_status->setText(host.isEmpty()
                          ? tr("Recording into %1… (Cancel stops the command; what was recorded stays)").arg(m_outDirectory)
                          : tr("Recording on %1, copied into %2… (Cancel stops the command there; what was recorded stays)")
                                .arg(host, m_outDirectory));
    m_lookForTrace->start();
    setRunning(true);
}

void RecordDialog::lookForTrace()
{
    const QDir out(m_outDirectory);
    const QStringList names = out.entryList({QStringLiteral("*.peaklens")}, QDir::Files, QDir::Name);
    if (names.isEmpty())
        return;
    const QString path = out.filePath(names.first());
    try {
        // A trace the collector just created: its first commit holds a few rows.
        TraceFollower follower(path.toStdString());
        follower.poll();
        if (follower.writer() == TraceFollower::Writer::Waiting)
            return;
    } catch (const Error &) {
        return; // not yet a trace a reader can open; the end of the run says what it left
    }
    m_lookForTrace->stop();
    Q_EMIT started(path);
}

void RecordDialog::onFinished(int exitCode, QProcess::ExitStatus status)
{
    m_process->deleteLater();
    m_process = nullptr;
    m_lookForTrace->stop();
    setRunning(false);
    const QDir out(m_outDirectory);
    QStringList traces;
    for (const QString &name : out.entryList({QStringLiteral("*.peaklens")}, QDir::Files, QDir::Name))
        traces << out.filePath(name);
    if (!traces.isEmpty()) {
        m_status->setText(tr("Recorded %n trace(s); the command exited with %1.", nullptr, int(traces.size())).arg(exitCode));
        // peaklens-cli's own complaint (a connection to the host cut mid-run), not the command's.
        const QString prefix = QStringLiteral("peaklens-cli: ");
        Q_EMIT recorded(traces, m_lastLine.startsWith(prefix) ? m_lastLine.mid(prefix.size()) : QString());
        accept();
        return;
    }
    const QString message = status != QProcess::NormalExit ? tr("peaklens-cli record stopped (%1).").arg(exitCode)
                            : m_lastLine.isEmpty()         ? tr("The command left no trace.")
                                                           : m_lastLine;
    m_status->setText(message);
    Q_EMIT failed(message);
}

void RecordDialog::setRunning(bool running)
{
    m_busy->setVisible(running);
    m_record->setEnabled(!running);
    m_command->setEnabled(!running);
    m_host->setEnabled(!running);
    m_browse->setEnabled(!running && m_host->text().trimmed().isEmpty());
    m_workingDirectory->setEnabled(!running);
    m_backend->setEnabled(!running);
}

void RecordDialog::reject()
{
    if (isRecording()) {
        // peaklens-cli passes SIGTERM on to the command; what the collector committed stays.
        m_process->terminate();
        m_status->setText(tr("Stopping…"));
        return;
    }
    QDialog::reject();
}

} // namespace peaklens::gui
