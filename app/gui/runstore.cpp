// SPDX-License-Identifier: GPL-3.0-or-later
#include "runstore.h"

#include "localpath.h"

#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/format/remotefile.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

namespace peaklens::gui {

namespace {

const QString kRunFile = QStringLiteral("run.json");

QStringList relativeTo(const QString &folder, const QStringList &paths)
{
    QStringList names;
    for (const QString &path : paths)
        names << QDir(folder).relativeFilePath(path);
    return names;
}

} // namespace

QString runsFolderOf(const QString &baselinePath)
{
    // A trace on a host keeps its reruns here, where the app keeps its data, by host and path.
    if (baselinePath.startsWith(QLatin1String(kRemoteScheme))) {
        QStringList parts = baselinePath.mid(qsizetype(kRemoteScheme.size())).split(QLatin1Char('/'), Qt::SkipEmptyParts);
        parts.removeAll(QStringLiteral(".."));
        return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                   .filePath(QStringLiteral("remote/") + parts.join(QLatin1Char('/')))
               + QStringLiteral(".runs");
    }
    return QFileInfo(baselinePath).absoluteFilePath() + QStringLiteral(".runs");
}

void giveRunFolder(RunRecord &record, const QString &baselinePath)
{
    const QDir runs(runsFolderOf(baselinePath));
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    for (int attempt = 0; attempt < 100 && !baselinePath.isEmpty(); ++attempt) {
        const QString name =
            attempt == 0 ? QStringLiteral("run-%1").arg(stamp) : QStringLiteral("run-%1-%2").arg(stamp).arg(attempt);
        if (runs.exists(name))
            continue;
        if (!runs.mkpath(name))
            break;
        record.folder = runs.filePath(name);
        record.kept = true;
        return;
    }
    record.directory = std::make_shared<QTemporaryDir>();
    record.folder = record.directory->path();
    record.kept = false;
}

void saveRun(const RunRecord &record)
{
    QJsonArray checkpoint;
    for (const QString &unit : record.checkpoint())
        checkpoint.append(unit);
    const QJsonObject object{
        {QStringLiteral("label"), record.label},
        {QStringLiteral("checkpoint"), checkpoint},
        {QStringLiteral("predicted_peak_bytes"), qint64(record.row.predicted.peakBytes)},
        {QStringLiteral("predicted_step_ns"), qint64(record.row.predicted.stepTimeNs)},
        {QStringLiteral("model_step_ns"), qint64(record.row.modelBaseline.stepTimeNs)},
        {QStringLiteral("outcome"), record.outcome()},
        {QStringLiteral("traces"), QJsonArray::fromStringList(relativeTo(record.folder, record.tracePaths))},
        {QStringLiteral("measured"), QJsonDocument::fromJson(QByteArray::fromStdString(record.row.measured.toJson())).object()},
    };
    OutputFile(localPath(QDir(record.folder).filePath(kRunFile)), OutputFile::Existing::Replace)
        .write(QJsonDocument(object).toJson().toStdString());
}

void saveRunTo(RunRecord &record, const QString &parent)
{
    const QDir source(record.folder);
    const QString target = QDir(parent).filePath(QFileInfo(record.folder).fileName() + QLatin1Char('-')
                                                 + record.label.simplified().replace(QLatin1Char(' '), QLatin1Char('-')));
    if (QFileInfo::exists(target))
        throw FileError(localPath(target), "already exists; choose another folder.");
    if (!QDir().mkpath(target))
        throw FileError(localPath(target), "cannot be made.");
    QStringList copied;
    for (const QFileInfo &entry : source.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString relative = source.relativeFilePath(entry.absoluteFilePath());
        if (entry.isDir()) {
            QDir(target).mkpath(relative);
            for (const QFileInfo &file : QDir(entry.absoluteFilePath()).entryInfoList(QDir::Files))
                copied << source.relativeFilePath(file.absoluteFilePath());
        } else {
            copied << relative;
        }
    }
    for (const QString &relative : copied) {
        if (!QFile::copy(source.filePath(relative), QDir(target).filePath(relative)))
            throw FileError(localPath(QDir(target).filePath(relative)), "could not be written.");
    }
    QStringList traces;
    for (const QString &name : relativeTo(record.folder, record.tracePaths))
        traces << QDir(target).filePath(name);
    record.tracePaths = traces;
    record.folder = target;
    record.kept = true;
    saveRun(record);
}

std::vector<RunRecord> keptRuns(const QString &baselinePath, QStringList *problems)
{
    std::vector<RunRecord> runs;
    const QDir folder(runsFolderOf(baselinePath));
    for (const QString &name : folder.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString path = folder.filePath(name + QLatin1Char('/') + kRunFile);
        QFile file(path);
        if (!file.exists())
            continue; // a rerun still running, or one that never finished
        QJsonParseError error{};
        const QJsonDocument document = file.open(QIODevice::ReadOnly) && file.size() < (1 << 24)
                                           ? QJsonDocument::fromJson(file.readAll(), &error)
                                           : QJsonDocument();
        const QJsonObject object = document.object();
        if (!document.isObject() || !object.value(QStringLiteral("label")).isString()) {
            if (problems)
                *problems << path;
            continue;
        }
        RunRecord run;
        run.folder = folder.filePath(name);
        run.kept = true;
        run.label = object.value(QStringLiteral("label")).toString();
        run.row.predicted.peakBytes = object.value(QStringLiteral("predicted_peak_bytes")).toInteger();
        run.row.predicted.stepTimeNs = object.value(QStringLiteral("predicted_step_ns")).toInteger();
        run.row.modelBaseline.stepTimeNs = object.value(QStringLiteral("model_step_ns")).toInteger();
        run.row.outcome = object.value(QStringLiteral("outcome")).toString().toStdString();
        for (const auto &trace : object.value(QStringLiteral("traces")).toArray())
            run.tracePaths << QDir(run.folder).filePath(trace.toString());
        try {
            const QByteArray measured = QJsonDocument(object.value(QStringLiteral("measured")).toObject()).toJson();
            run.row.measured = ReplayResult::fromJson(measured.toStdString(), localPath(path));
            std::vector<std::string> units;
            for (const auto &unit : object.value(QStringLiteral("checkpoint")).toArray())
                units.push_back(unit.toString().toStdString());
            run.row.strategy = CheckpointStrategy::ofUnitTexts(units);
        } catch (const Error &) {
            if (problems)
                *problems << path;
            continue;
        }
        runs.push_back(std::move(run));
    }
    return runs;
}

} // namespace peaklens::gui
