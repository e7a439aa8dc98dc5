#include "replayprocess.h"

#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace peaklens::gui {

namespace {

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

} // namespace

ReplayProcess::ReplayProcess(QObject *parent)
    : QObject(parent)
{
}

ReplayProcess::~ReplayProcess()
{
    cancel();
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
    if (!document.costModel)
        return tr("the trace has no checkpointable chain");
    if (replayed && executable().isEmpty())
        return tr("peaklens-replay is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
    if (!replayed && executable(QStringLiteral("peaklens-cli")).isEmpty())
        return tr("peaklens-cli is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
    return {};
}

bool ReplayProcess::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

void ReplayProcess::start(const TraceDocument &document, const RunRecord &record)
{
    cancel();
    m_record = record;
    m_stderrTail.clear();
    m_cancelled = false;
    m_directory = std::make_unique<QTemporaryDir>();
    m_relaunch = meta(document, metakey::ReplaySpec).isEmpty();
    if (m_relaunch)
        startRelaunch(document, record);
    else
        startReplay(document, record);
}

void ReplayProcess::startRelaunch(const TraceDocument &document, const RunRecord &record)
{
    m_rank = meta(document, metakey::Rank);
    QString allocator = meta(document, metakey::AllocatorMode);
    if (allocator.isEmpty())
        allocator = QStringLiteral("exact");
    const QStringList arguments = QStringList{QStringLiteral("record"), QStringLiteral("--allocator"), allocator,
                                              QStringLiteral("--out"), m_directory->path(), QStringLiteral("--")}
                                  + commandOf(document);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("PEAKLENS_CHECKPOINT"),
                       record.checkpoint.isEmpty() ? QStringLiteral("none") : record.checkpoint.join(QLatin1Char(',')));
    m_process = new QProcess(this);
    m_process->setProcessEnvironment(environment);
    m_process->setWorkingDirectory(meta(document, metakey::WorkingDirectory));
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::readyRead, this, [this] {
        while (m_process->canReadLine()) {
            const QByteArray line = m_process->readLine().trimmed();
            if (!line.isEmpty())
                m_stderrTail = line;
        }
        Q_EMIT progress(0, 0);
    });
    connect(m_process, &QProcess::finished, this, &ReplayProcess::onFinished);
    m_process->start(executable(QStringLiteral("peaklens-cli")), arguments);
}

void ReplayProcess::startReplay(const TraceDocument &document, const RunRecord &record)
{
    const QString spec = m_directory->filePath(QStringLiteral("spec.json"));
    QFile file(spec);
    if (!file.open(QIODevice::WriteOnly) || file.write(meta(document, metakey::ReplaySpec).toUtf8()) < 0) {
        m_record.outcome = tr("cannot write the replay spec to %1").arg(spec);
        Q_EMIT finished(m_record);
        return;
    }
    file.close();

    QStringList arguments{QStringLiteral("--model"), spec, QStringLiteral("--checkpoint"),
                          record.checkpoint.isEmpty() ? QStringLiteral("none") : record.checkpoint.join(QLatin1Char(',')),
                          QStringLiteral("--json"), QStringLiteral("--out"),
                          m_directory->filePath(QStringLiteral("run.peaklens"))};
    if (!record.checkpoint.isEmpty())
        arguments << QStringLiteral("--verify-gradients");
    // Same steps, warm-up, device and precision as the trace being compared with.
    const QJsonObject options = QJsonDocument::fromJson(meta(document, metakey::ReplayOptions).toUtf8()).object();
    const std::pair<const char *, const char *> flags[] = {
        {"steps", "--steps"}, {"warmup", "--warmup"}, {"dtype", "--dtype"}, {"micro_batches", "--micro-batches"}};
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
            if (event.value(QLatin1String("event")).toString() == QLatin1String("step"))
                Q_EMIT progress(event.value(QLatin1String("step")).toInt() + 1, event.value(QLatin1String("of")).toInt());
            else if (event.isEmpty())
                m_stderrTail = line.trimmed();
        }
    });
    m_process->setReadChannel(QProcess::StandardError);
    connect(m_process, &QProcess::finished, this, &ReplayProcess::onFinished);
    m_process->start(executable(), arguments);
}

void ReplayProcess::cancel()
{
    if (!isRunning())
        return;
    m_cancelled = true;
    // SIGTERM first: peaklens-cli record passes it on to the training command.
    m_process->terminate();
    if (!m_process->waitForFinished(5000)) {
        m_process->kill();
        m_process->waitForFinished(5000);
    }
}

void ReplayProcess::onFinished(int exitCode, QProcess::ExitStatus status)
{
    const QByteArray rest = m_process->readAllStandardError().trimmed();
    if (!rest.isEmpty())
        m_stderrTail = rest.split('\n').last();
    if (m_cancelled)
        m_record.outcome = tr("cancelled");
    else if (status != QProcess::NormalExit)
        m_record.outcome = m_relaunch ? tr("peaklens-cli record crashed") : tr("peaklens-replay crashed");
    else if (m_relaunch)
        takeRecording(exitCode);
    else
        takeReplayResult(exitCode);
    m_process->deleteLater();
    m_process = nullptr;
    Q_EMIT finished(m_record);
}

void ReplayProcess::takeRecording(int exitCode)
{
    const QByteArray rest = m_process->readAll().trimmed();
    if (!rest.isEmpty())
        m_stderrTail = rest.split('\n').last();
    // Each process of the run left its own file; compare the one of the same rank.
    QStringList traces = QDir(m_directory->path()).entryList({QStringLiteral("*.peaklens")}, QDir::Files, QDir::Name);
    const QString sameRank = QStringLiteral("rank%1-").arg(m_rank);
    std::stable_partition(traces.begin(), traces.end(),
                          [&](const QString &name) { return !m_rank.isEmpty() && name.startsWith(sameRank); });
    if (exitCode != 0 || traces.isEmpty()) {
        m_record.outcome = exitCode != 0 ? tr("the command exited with %1: %2").arg(exitCode).arg(QString::fromUtf8(m_stderrTail))
                                         : tr("the command left no trace (did it use CUDA?)");
        if (traces.isEmpty())
            return;
    }
    try {
        m_record.document = loadDocument(m_directory->filePath(traces.front()));
        const TraceSummary &summary = m_record.document->summary;
        if (summary.peak.primary)
            m_record.measuredPeakBytes = summary.peak.devices[*summary.peak.primary].allocatedBytes;
        if (m_record.document->costModel) // the median step, as for the baseline
            m_record.measuredStepMs = double(m_record.document->costModel->stepTimeNs) / 1e6;
    } catch (const std::exception &error) {
        m_record.outcome = QString::fromStdString(visibleText(error.what()));
    }
}

void ReplayProcess::takeReplayResult(int exitCode)
{
    const QJsonObject result = QJsonDocument::fromJson(m_process->readAllStandardOutput()).object();
    if (exitCode != 0 && exitCode != 3 && exitCode != 4) { // 3: out of memory, 4: gradients differ
        m_record.outcome = QString::fromUtf8(m_stderrTail).remove(QStringLiteral("peaklens-replay: "));
    } else {
        const QJsonValue peak = result.value(QLatin1String("peak_allocated_bytes"));
        const QJsonValue time = result.value(QLatin1String("step_time_ms"));
        if (peak.isDouble())
            m_record.measuredPeakBytes = static_cast<std::int64_t>(peak.toDouble());
        if (time.isDouble())
            m_record.measuredStepMs = time.toDouble();
        const QJsonObject check = result.value(QLatin1String("gradient_check")).toObject();
        if (!check.isEmpty()) {
            m_record.gradientDifference = check.value(QLatin1String("max_relative_difference")).toDouble();
            m_record.gradientsAgree = check.value(QLatin1String("agree")).toBool();
        }
        const QJsonObject oom = result.value(QLatin1String("oom")).toObject();
        if (!oom.isEmpty())
            m_record.outcome = oom.value(QLatin1String("message")).toString();
        const QString trace = result.value(QLatin1String("trace")).toString();
        try {
            if (!trace.isEmpty())
                m_record.document = loadDocument(trace);
        } catch (const std::exception &error) {
            m_record.outcome = QString::fromStdString(visibleText(error.what()));
        }
    }
}

} // namespace peaklens::gui
