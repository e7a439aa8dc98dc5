#include "replayprocess.h"

#include "core/trace/metadata.h"

#include <QCoreApplication>
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

} // namespace

ReplayProcess::ReplayProcess(QObject *parent)
    : QObject(parent)
{
}

ReplayProcess::~ReplayProcess()
{
    cancel();
}

QString ReplayProcess::executable()
{
    const QString fromEnvironment = qEnvironmentVariable("PEAKLENS_PLUGIN_DIR");
    for (const QString &directory : {fromEnvironment, QCoreApplication::applicationDirPath()}) {
        const QString path = directory + QStringLiteral("/peaklens-replay");
        if (!directory.isEmpty() && QFileInfo(path).isExecutable())
            return path;
    }
    return {};
}

QString ReplayProcess::unavailableReason(const TraceDocument &document)
{
    if (meta(document, metakey::ReplaySpec).isEmpty())
        return tr("this trace was not recorded by peaklens-replay, so there is no model to rerun");
    if (!document.costModel)
        return tr("the trace has no checkpointable chain");
    if (executable().isEmpty())
        return tr("peaklens-replay is not installed next to the app (or in PEAKLENS_PLUGIN_DIR)");
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
    m_process->kill();
    m_process->waitForFinished(5000);
}

void ReplayProcess::onFinished(int exitCode, QProcess::ExitStatus status)
{
    m_process->setReadChannel(QProcess::StandardError);
    const QByteArray rest = m_process->readAllStandardError().trimmed();
    if (!rest.isEmpty())
        m_stderrTail = rest.split('\n').last();
    const QJsonObject result = QJsonDocument::fromJson(m_process->readAllStandardOutput()).object();
    m_process->deleteLater();
    m_process = nullptr;

    if (m_cancelled) {
        m_record.outcome = tr("cancelled");
    } else if (status != QProcess::NormalExit) {
        m_record.outcome = tr("peaklens-replay crashed");
    } else if (exitCode != 0 && exitCode != 3) {
        m_record.outcome = QString::fromUtf8(m_stderrTail).remove(QStringLiteral("peaklens-replay: "));
    } else {
        const QJsonValue peak = result.value(QLatin1String("peak_allocated_bytes"));
        const QJsonValue time = result.value(QLatin1String("step_time_ms"));
        if (peak.isDouble())
            m_record.measuredPeakBytes = static_cast<std::int64_t>(peak.toDouble());
        if (time.isDouble())
            m_record.measuredStepMs = time.toDouble();
        const QJsonObject oom = result.value(QLatin1String("oom")).toObject();
        if (!oom.isEmpty())
            m_record.outcome = oom.value(QLatin1String("message")).toString();
        const QString trace = result.value(QLatin1String("trace")).toString();
        try {
            if (!trace.isEmpty())
                m_record.document = loadDocument(trace);
        } catch (const std::exception &error) {
            m_record.outcome = QString::fromUtf8(error.what());
        }
    }
    Q_EMIT finished(m_record);
}

} // namespace peaklens::gui
