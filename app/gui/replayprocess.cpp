#include "replayprocess.h"

#include "runstore.h"

#include "core/error.h"
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
// Steps measured beside the baseline's, at least.
constexpr int kMinPairs = 10;

QString meta(const TraceDocument &document, std::string_view key)
{
    return QString::fromStdString(document.trace->metaValue(key));
}

// The recorded command line (meta "command", a JSON array), empty when there is none.
QStringList commandOf(const TraceDocument &document)
{
    QStringList command;
    for (const QJsonValue &argument : QJsonDocument::fromJson(meta(document, metakey::Command).toUtf8()).array())
        command << argument.toString();
    return command;
}

QString togglesText(const QStringList &units)
{
    return units.isEmpty() ? QStringLiteral("none") : units.join(QLatin1Char(','));
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
        const QString path = directory + QLatin1Char('/') + name;
        if (!directory.isEmpty() && QFileInfo(path).isExecutable())
            return path;
    }
    return {};
}

QString ReplayProcess::unavailableReason(const TraceDocument &document)
{
    const bool replayed = !meta(document, metakey::ReplaySpec).isEmpty();
    const bool recorded = !commandOf(document).isEmpty();
    if (!replayed && !recorded)
        return tr("this trace has neither a replay spec nor a recorded command, so there is nothing to rerun");
    if (!document.model)
        return tr("the trace has no checkpointable chain");
    if (replayed && executable().isEmpty())
        return tr("peaklens-replay is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
    if (!replayed && executable(QStringLiteral("peaklens-cli")).isEmpty())
        return tr("peaklens-cli is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
    return {};
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
    QStringList baseline;
    for (const std::string &unit : document.checkpoint)
        baseline << QString::fromStdString(unit);
    m_baselineToggles = togglesText(baseline);
    m_relaunch = meta(document, metakey::ReplaySpec).isEmpty();
    if (!m_relaunch) {
        startReplay(document);
        return;
    }
    m_command = commandOf(document);
    m_workingDirectory = meta(document, metakey::WorkingDirectory);
    m_rank = meta(document, metakey::Rank);
    m_allocator = meta(document, metakey::AllocatorMode);
    if (m_allocator.isEmpty())
        m_allocator = QStringLiteral("exact");
    // The baseline first, then the toggles: both on this machine, under the same load.
    m_relaunchingBaseline = true;
    startRelaunch(m_baselineToggles, QStringLiteral("baseline"));
}

void ReplayProcess::startRelaunch(const QString &toggles, const QString &folder)
{
    const QString out = QDir(m_record.folder).filePath(folder);
    const QStringList arguments = QStringList{QStringLiteral("record"), QStringLiteral("--allocator"), m_allocator,
                                              QStringLiteral("--out"), out, QStringLiteral("--")}
                                  + m_command;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("PEAKLENS_CHECKPOINT"), toggles);
    m_process = new QProcess(this);
    m_process->setProcessEnvironment(environment);
    m_process->setWorkingDirectory(m_workingDirectory);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::readyRead, this, [this] {
        while (m_process->canReadLine()) {
            const QByteArray line = m_process->readLine().trimmed();
            if (!line.isEmpty())
                m_stderrTail = line;
        }
        Q_EMIT progress(0, 0);
        announceTrace();
    });
    connect(m_process, &QProcess::finished, this, &ReplayProcess::onFinished);
    m_process->start(executable(QStringLiteral("peaklens-cli")), arguments);
}

void ReplayProcess::startReplay(const TraceDocument &document)
{
    const QString spec = QDir(m_record.folder).filePath(QStringLiteral("spec.json"));
    QFile file(spec);
    if (!file.open(QIODevice::WriteOnly) || file.write(meta(document, metakey::ReplaySpec).toUtf8()) < 0) {
        m_record.outcome = tr("cannot write the replay spec to %1").arg(spec);
        QTimer::singleShot(0, this, [this] { Q_EMIT finished(m_record); });
        return;
    }
    file.close();

    QStringList arguments{QStringLiteral("--model"), spec, QStringLiteral("--checkpoint"), togglesText(m_record.checkpoint),
                          QStringLiteral("--baseline"), m_baselineToggles, QStringLiteral("--json"), QStringLiteral("--out"),
                          QDir(m_record.folder).filePath(QStringLiteral("run.peaklens"))};
    if (!m_record.checkpoint.isEmpty())
        arguments << QStringLiteral("--verify-gradients");
    // Same steps, warm-up, device and precision as the trace being compared with.
    const QJsonObject options = QJsonDocument::fromJson(meta(document, metakey::ReplayOptions).toUtf8()).object();
    const std::pair<const char *, const char *> flags[] = {
        {"warmup", "--warmup"}, {"dtype", "--dtype"}, {"micro_batches", "--micro-batches"}};
    // Enough pairs that a change no larger than the noise shows as noise: with 10, all of
    // them agreeing in sign by chance has a probability of 2 in 1,000.
    arguments << QStringLiteral("--steps") << QString::number(std::max(options.value(QLatin1String("steps")).toInt(), kMinPairs));
    for (const auto &[key, flag] : flags) {
        const QJsonValue value = options.value(QLatin1String(key));
        if (!value.isUndefined())
            arguments << QLatin1String(flag) << (value.isString() ? value.toString() : QString::number(value.toInt()));
    }
    const QString device = options.value(QLatin1String("device")).toString();
    if (!device.isEmpty())
        arguments << QStringLiteral("--device") << (device.startsWith(QLatin1String("cuda")) ? QStringLiteral("cuda") : QStringLiteral("cpu"));

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
    connect(m_process, &QProcess::finished, this, &ReplayProcess::onFinished);
    m_process->start(executable(), arguments);
}

void ReplayProcess::announceTrace()
{
    if (m_traceAnnounced || m_cancelled || (m_relaunch && m_relaunchingBaseline))
        return;
    QString path;
    if (!m_relaunch) {
        path = QDir(m_record.folder).filePath(QStringLiteral("run.peaklens"));
    } else {
        const QDir out(QDir(m_record.folder).filePath(QStringLiteral("run")));
        const QStringList traces = out.entryList({QStringLiteral("*.peaklens")}, QDir::Files, QDir::Name);
        if (!traces.isEmpty())
            path = out.filePath(traces.front());
    }
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
    const QByteArray rest = (m_relaunch ? m_process->readAll() : m_process->readAllStandardError()).trimmed();
    if (!rest.isEmpty())
        m_stderrTail = rest.split('\n').last();
    const QString folder = m_relaunchingBaseline ? QStringLiteral("baseline") : QStringLiteral("run");
    if (m_cancelled)
        m_record.outcome = tr("cancelled");
    else if (status != QProcess::NormalExit)
        m_record.outcome = m_relaunch ? tr("peaklens-cli record crashed") : tr("peaklens-replay crashed");
    else if (!m_relaunch)
        takeReplayResult(exitCode);
    else if (takeRecording(exitCode, folder) && m_relaunchingBaseline) {
        m_process->deleteLater();
        m_relaunchingBaseline = false;
        startRelaunch(togglesText(m_record.checkpoint), QStringLiteral("run"));
        return;
    }
    finish();
}

void ReplayProcess::finish()
{
    m_process->deleteLater();
    m_process = nullptr;
    // The run's trace first, then the baseline measured beside it.
    if (m_relaunch && m_record.tracePaths.size() == 2)
        std::swap(m_record.tracePaths[0], m_record.tracePaths[1]);
    Q_EMIT finished(m_record);
}

bool ReplayProcess::takeRecording(int exitCode, const QString &folder)
{
    // Each process of the run left its own file; compare the one of the same rank.
    const QDir out(QDir(m_record.folder).filePath(folder));
    QStringList traces = out.entryList({QStringLiteral("*.peaklens")}, QDir::Files, QDir::Name);
    const QString sameRank = QStringLiteral("rank%1-").arg(m_rank);
    std::stable_partition(traces.begin(), traces.end(),
                          [&](const QString &name) { return !m_rank.isEmpty() && name.startsWith(sameRank); });
    if (exitCode != 0 || traces.isEmpty()) {
        const QString which = m_relaunchingBaseline ? tr("with the baseline's toggles, ") : QString();
        m_record.outcome = exitCode != 0 ? tr("%1the command exited with %2: %3").arg(which).arg(exitCode).arg(QString::fromUtf8(m_stderrTail))
                                         : tr("%1the command left no trace (did it use CUDA?)").arg(which);
    }
    // A run cut short still left what it recorded; a baseline that failed is no baseline.
    if (!traces.isEmpty() && (m_record.outcome.isEmpty() || !m_relaunchingBaseline))
        m_record.tracePaths << out.filePath(traces.front());
    return m_record.outcome.isEmpty();
}

void ReplayProcess::takeReplayResult(int exitCode)
{
    const QByteArray output = m_process->readAllStandardOutput();
    if (exitCode != 0 && exitCode != 3 && exitCode != 4) { // 3: out of memory, 4: gradients differ
        m_record.outcome = QString::fromUtf8(m_stderrTail).remove(QStringLiteral("peaklens-replay: "));
        return;
    }
    try {
        m_record.measured = ReplayResult::fromJson(output.toStdString(), "peaklens-replay's result");
    } catch (const Error &error) {
        m_record.outcome = QString::fromStdString(visibleText(error.what()));
        return;
    }
    if (!m_record.measured.outOfMemory.empty())
        m_record.outcome = QString::fromStdString(visibleText(m_record.measured.outOfMemory));
    if (!m_record.measured.tracePath.empty())
        m_record.tracePaths << QString::fromStdString(m_record.measured.tracePath);
}

} // namespace peaklens::gui
