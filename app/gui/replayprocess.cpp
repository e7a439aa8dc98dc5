// SPDX-License-Identifier: GPL-3.0-or-later
#include "replayprocess.h"

#include "localpath.h"

#include "core/format/remotefile.h"

#include "runstore.h"

#include "core/error.h"
#include "core/plan/rerunlaunch.h"
#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <algorithm>

namespace peaklens::gui {

namespace {

// How long a child may take to stop after SIGTERM before it is killed.
constexpr int kStopGraceMs = 5000;

QString meta(const TraceDocument &document, std::string_view key)
{
    return QString::fromStdString(document.trace->metaValue(key));
}

std::vector<std::string> units(const QStringList &toggles)
{
    std::vector<std::string> out;
    for (const QString &unit : toggles)
        out.push_back(unit.toStdString());
    return out;
}

QStringList strings(const std::vector<std::string> &values)
{
    QStringList out;
    for (const std::string &value : values)
        out << QString::fromStdString(value);
    return out;
}

} // namespace

ReplayProcess::ReplayProcess(QObject *parent)
    : QObject(parent)
{
}

ReplayProcess::~ReplayProcess()
{
    if (!isRunning())
        return;
    // Nobody is left to tell: stop the child and let it go, without a word to the window.
    m_process->disconnect(this);
    m_process->terminate();
    if (!m_process->waitForFinished(kStopGraceMs)) {
        m_process->kill();
        m_process->waitForFinished(1000);
    }
}

QString ReplayProcess::executable(const QString &name)
{
    const QString fromEnvironment = qEnvironmentVariable("PEAKLENS_PLUGIN_DIR");
    for (const QString &directory : {fromEnvironment, QCoreApplication::applicationDirPath()}) {
        QString path = directory + QLatin1Char('/') + name;
        if (!directory.isEmpty() && QFileInfo(path).isExecutable())
            return path;
    }
    return {};
}

QString ReplayProcess::unavailableReason(const TraceDocument &document)
{
    if (const auto reason = rerunUnavailable(*document.trace))
        return tr("this trace cannot be rerun: %1").arg(QString::fromStdString(*reason));
    const bool replayed = !meta(document, metakey::ReplaySpec).isEmpty();
    const bool onHost = !hostPath(document).isEmpty(); // the host's engine reruns it
    if (!document.model)
        return tr("the trace has no checkpointable chain");
    if (replayed && !onHost && executable().isEmpty())
        return tr("peaklens-replay is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
    if ((!replayed || onHost) && executable(QStringLiteral("peaklens-cli")).isEmpty())
        return tr("peaklens-cli is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
    return {};
}

QString ReplayProcess::hostPath(const TraceDocument &document)
{
    if (document.filePath().startsWith(QLatin1String(kRemoteScheme)))
        return document.filePath();
    const auto origin = originOf(localPath(document.filePath()));
    return origin ? fromLocalPath(*origin) : QString();
}

bool ReplayProcess::isRunning() const
{
    return m_process != nullptr;
}

void ReplayProcess::start(const TraceDocument &document, const RunRecord &record)
{
    if (isRunning())
        return;
    m_record = record;
    giveRunFolder(m_record, document.filePath());
    m_stderrTail.clear();
    m_cancelled = false;
    m_traceAnnounced = false;
    m_plan = planRerun(*document.trace, units(m_record.checkpoint()), document.checkpoint, m_record.folder.toStdString(), 0);
    const QString onHost = hostPath(document);
    m_onHost = !onHost.isEmpty();
    if (m_onHost) {
        startOnHost(onHost);
        return;
    }
    for (const auto &[path, contents] : m_plan.files) {
        QFile file(QString::fromStdString(path));
        if (!file.open(QIODevice::WriteOnly) || file.write(contents.data(), qint64(contents.size())) < 0) {
            m_record.row.outcome = tr("cannot write %1").arg(file.fileName()).toStdString();
            QTimer::singleShot(0, this, [this] { Q_EMIT finished(m_record); });
            return;
        }
    }
    m_launch = 0;
    if (m_plan.relaunch)
        startRelaunch();
    else
        startReplay();
}

// Starts m_plan.launches[m_launch]; the caller connects what it reads.
void ReplayProcess::startLaunch(QProcess::ProcessChannelMode channels)
{
    const RerunLaunch &launch = m_plan.launches[m_launch];
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const auto &[name, value] : launch.environment)
        environment.insert(QString::fromStdString(name), QString::fromStdString(value));
    m_process->setProcessEnvironment(environment);
    if (!launch.workingDirectory.empty())
        m_process->setWorkingDirectory(QString::fromStdString(launch.workingDirectory));
    m_process->setProcessChannelMode(channels);
    connect(m_process, &QProcess::finished, this, &ReplayProcess::onFinished);
    m_process->start(executable(QString::fromStdString(launch.program)), strings(launch.arguments));
}

void ReplayProcess::followOutput()
{
    connect(m_process, &QProcess::readyRead, this, [this] {
        while (m_process->canReadLine()) {
            const QByteArray line = m_process->readLine().trimmed();
            if (!line.isEmpty())
                m_stderrTail = line;
        }
        Q_EMIT progress(0, 0);
        announceTrace();
    });
}

void ReplayProcess::startRelaunch()
{
    m_process = new QProcess(this);
    followOutput();
    startLaunch(QProcess::MergedChannels);
}

void ReplayProcess::startOnHost(const QString &path)
{
    // One `peaklens-cli rerun ssh://…` runs the plan's launches there and copies their
    // traces into the record's folder as planned here; the run's is the one to follow.
    m_launch = m_plan.relaunch ? 1 : 0;
    m_process = new QProcess(this);
    followOutput();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::finished, this, &ReplayProcess::onFinished);
    m_process->start(executable(QStringLiteral("peaklens-cli")),
                     {QStringLiteral("rerun"), path, QStringLiteral("--checkpoint"),
                      QString::fromStdString(togglesArgument(units(m_record.checkpoint()))), QStringLiteral("--out"),
                      m_record.folder});
}

void ReplayProcess::takeHostRerun(int exitCode)
{
    if (exitCode != 0 && exitCode != 3 && exitCode != 4) { // 3: out of memory, 4: gradients differ
        m_record.row.outcome = QString::fromUtf8(m_stderrTail).remove(QStringLiteral("peaklens-cli: ")).toStdString();
        return;
    }
    if (m_plan.relaunch) {
        // The baseline's, then the run's, as two local relaunches leave them.
        for (const RerunLaunch &launch : m_plan.launches) {
            if (const auto trace = relaunchedTrace(launch.traceFolder, m_plan.rank))
                m_record.tracePaths << QString::fromStdString(*trace);
        }
        if (m_record.tracePaths.size() != 2)
            m_record.row.outcome = tr("the rerun on the host left no trace to compare").toStdString();
        return;
    }
    QFile result(QDir(m_record.folder).filePath(QStringLiteral("result.json")));
    if (!result.open(QIODevice::ReadOnly)) {
        m_record.row.outcome = tr("the rerun on the host left no result").toStdString();
        return;
    }
    try {
        m_record.row.measured = ReplayResult::fromJson(result.readAll().toStdString(), "the host's replay result");
    } catch (const Error &error) {
        m_record.row.outcome = visibleText(error.what());
        return;
    }
    if (!m_record.row.measured.outOfMemory().empty())
        m_record.row.outcome = visibleText(m_record.row.measured.outOfMemory());
    m_record.row.measured.tracePath = m_plan.runTrace; // the copy here, not the path there
    m_record.tracePaths << QString::fromStdString(m_plan.runTrace);
}

void ReplayProcess::startReplay()
{
    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardError, this, [this] {
        while (m_process->canReadLine()) {
            const QByteArray line = m_process->readLine();
            const QJsonObject event = QJsonDocument::fromJson(line).object();
            if (event.value(QLatin1String("event")).toString() == QLatin1String("step")) {
                Q_EMIT progress(event.value(QLatin1String("step")).toInt() + 1, event.value(QLatin1String("of")).toInt());
                announceTrace(); // a step's progress line follows its commit
            } else if (event.isEmpty()) {
                m_stderrTail = line.trimmed();
            }
        }
    });
    m_process->setReadChannel(QProcess::StandardError);
    startLaunch(QProcess::SeparateChannels);
}

void ReplayProcess::announceTrace()
{
    if (m_traceAnnounced || m_cancelled || relaunchingBaseline())
        return;
    const std::optional<std::string> found =
        m_plan.relaunch ? relaunchedTrace(m_plan.launches[m_launch].traceFolder, m_plan.rank) : m_plan.runTrace;
    const QString path = found ? QString::fromStdString(*found) : QString();
    if (path.isEmpty() || !QFileInfo::exists(path))
        return;
    m_traceAnnounced = true;
    Q_EMIT traceStarted(path);
}

void ReplayProcess::cancel()
{
    if (!isRunning() || m_cancelled)
        return;
    m_cancelled = true;
    // SIGTERM first: peaklens-cli record passes it on to the training command.
    m_process->terminate();
    QTimer::singleShot(kStopGraceMs, m_process, [process = m_process] { process->kill(); });
}

void ReplayProcess::onFinished(int exitCode, QProcess::ExitStatus status)
{
    // A relaunch merges its channels; peaklens-replay keeps stdout for its result.
    const QByteArray rest = (m_plan.relaunch ? m_process->readAll() : m_process->readAllStandardError()).trimmed();
    if (!rest.isEmpty())
        m_stderrTail = rest.split('\n').last();
    if (m_cancelled)
        m_record.row.outcome = RunRecord::cancelledOutcome().toStdString();
    else if (status != QProcess::NormalExit)
        m_record.row.outcome = (m_onHost          ? tr("peaklens-cli rerun crashed")
                                : m_plan.relaunch ? tr("peaklens-cli record crashed")
                                                  : tr("peaklens-replay crashed"))
                                   .toStdString();
    else if (m_onHost)
        takeHostRerun(exitCode);
    else if (!m_plan.relaunch)
        takeReplayResult(exitCode);
    else if (takeRecording(exitCode) && relaunchingBaseline()) {
        m_process->deleteLater();
        ++m_launch;
        startRelaunch();
        return;
    }
    finish();
}

void ReplayProcess::finish()
{
    m_process->deleteLater();
    m_process = nullptr;
    // The run's trace first, then the baseline measured beside it.
    if (m_plan.relaunch && m_record.tracePaths.size() == 2)
        std::swap(m_record.tracePaths[0], m_record.tracePaths[1]);
    Q_EMIT finished(m_record);
}

bool ReplayProcess::relaunchingBaseline() const
{
    return m_plan.relaunch && m_launch == 0;
}

bool ReplayProcess::takeRecording(int exitCode)
{
    // Each process of the run left its own file; compare the one of the same rank.
    const std::optional<std::string> trace = relaunchedTrace(m_plan.launches[m_launch].traceFolder, m_plan.rank);
    if (exitCode != 0 || !trace) {
        const QString which = relaunchingBaseline() ? tr("with the baseline's toggles, ") : QString();
        m_record.row.outcome =
            (exitCode != 0 ? tr("%1the command exited with %2: %3").arg(which).arg(exitCode).arg(QString::fromUtf8(m_stderrTail))
                           : tr("%1the command left no trace (did it import torch?)").arg(which))
                .toStdString();
    }
    // A run cut short still left what it recorded; a baseline that failed is no baseline.
    if (trace && (m_record.outcome().isEmpty() || !relaunchingBaseline()))
        m_record.tracePaths << QString::fromStdString(*trace);
    return m_record.outcome().isEmpty();
}

void ReplayProcess::takeReplayResult(int exitCode)
{
    const QByteArray output = m_process->readAllStandardOutput();
    if (exitCode != 0 && exitCode != 3 && exitCode != 4) { // 3: out of memory, 4: gradients differ
        m_record.row.outcome = QString::fromUtf8(m_stderrTail).remove(QStringLiteral("peaklens-replay: ")).toStdString();
        return;
    }
    try {
        m_record.row.measured = ReplayResult::fromJson(output.toStdString(), "peaklens-replay's result");
    } catch (const Error &error) {
        m_record.row.outcome = visibleText(error.what());
        return;
    }
    if (!m_record.row.measured.outOfMemory().empty())
        m_record.row.outcome = visibleText(m_record.row.measured.outOfMemory());
    if (!m_record.row.measured.tracePath.empty())
        m_record.tracePaths << QString::fromStdString(m_record.row.measured.tracePath);
}

} // namespace peaklens::gui
