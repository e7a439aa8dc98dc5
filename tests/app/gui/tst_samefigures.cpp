// SPDX-License-Identifier: GPL-3.0-or-later
// The figures a user reads first — the peak, the layer that reached it and the step time —
// are the same in the app, in `peaklens-cli summary --json`, `plan --json` and a JSON
// report, for every real recording in tests/data/real.
#include "testsupport.h"

#include "tracedocument.h"

#include "core/plan/predictor.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

struct CliResult
{
    int exitCode = -1;
    QJsonObject object;
    QString error;
};

CliResult runCli(const QStringList &arguments)
{
    QProcess cli;
    cli.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"), arguments);
    CliResult result;
    if (!cli.waitForFinished(120000)) {
        result.error = QStringLiteral("peaklens-cli %1 did not finish").arg(arguments.join(u' '));
        return result;
    }
    result.exitCode = cli.exitCode();
    result.error = QString::fromUtf8(cli.readAllStandardError());
    result.object = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    return result;
}

// The nanoseconds of a figure the JSON gives in milliseconds.
std::int64_t nanoseconds(const QJsonValue &milliseconds)
{
    return std::llround(milliseconds.toDouble() * 1e6);
}

QString layerOf(const QJsonValue &layer)
{
    return layer.isNull() ? QStringLiteral("(none)") : layer.toString();
}

} // namespace

class tst_SameFigures : public QObject
{
    Q_OBJECT

private slots:
    void everyView_data()
    {
        QTest::addColumn<QString>("path");
        const QDir real(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real"));
        for (const QString &name : real.entryList({QStringLiteral("*.gz")}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(name)) << real.filePath(name);
        QVERIFY(real.entryList({QStringLiteral("*.gz")}).size() >= 20);
    }

    void everyView()
    {
        QFETCH(QString, path);
        // The app: the document it opens, the timeline's peak label, the what-if bar's
        // measured step.
        const DocumentPtr document = loadDocument(path);
        const Trace &trace = *document->trace;
        const QString appLayer = document->summary.peakLayer < trace.layers.size()
                                     ? QString::fromStdString(trace.layers[document->summary.peakLayer].path)
                                     : QStringLiteral("(none)");
        const std::int64_t appStepNs = document->summary.stepTimeNs;
        if (document->model)
            QCOMPARE(predict(*document->model, CheckpointSchedule{}).stepTimeNs, appStepNs);

        const CliResult summary = runCli({QStringLiteral("summary"), QStringLiteral("--json"), path});
        QVERIFY2(summary.exitCode == 0, qPrintable(summary.error));
        const QJsonObject peak = summary.object[QStringLiteral("peak")].toObject();
        if (peak.isEmpty()) {
            QCOMPARE(document->peakBytes, 0);
        } else {
            QCOMPARE(peak[QStringLiteral("allocated_bytes")].toInteger(), document->peakBytes);
            QCOMPARE(layerOf(peak[QStringLiteral("layer")]), appLayer);
        }
        QCOMPARE(summary.object[QStringLiteral("step_time_ns")].toInteger(), appStepNs);

        // plan answers where the app has a model, and names the file where it has none.
        const CliResult plan = runCli(
            {QStringLiteral("plan"), QStringLiteral("--json"), QStringLiteral("--strategy"), QStringLiteral("none"), path});
        if (!document->model) {
            QVERIFY(plan.exitCode != 0);
            QVERIFY2(plan.error.contains(QFileInfo(path).fileName()), qPrintable(plan.error));
        } else {
            QVERIFY2(plan.exitCode == 0, qPrintable(plan.error));
            const QJsonObject baseline = plan.object[QStringLiteral("baseline")].toObject();
            QCOMPARE(baseline[QStringLiteral("peak_bytes")].toInteger(), document->peakBytes);
            QCOMPARE(layerOf(baseline[QStringLiteral("peak_layer")]), appLayer);
            QCOMPARE(nanoseconds(baseline[QStringLiteral("step_time_ms")]), appStepNs);
        }

        QTemporaryDir out;
        const QString reportPath = out.filePath(QStringLiteral("report.json"));
        const CliResult report = runCli({QStringLiteral("report"), QStringLiteral("-o"), reportPath, path});
        QVERIFY2(report.exitCode == 0, qPrintable(report.error));
        QFile file(reportPath);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject run =
            QJsonDocument::fromJson(file.readAll()).object()[QStringLiteral("runs")].toArray().first().toObject();
        QCOMPARE(run[QStringLiteral("peak_allocated_bytes")].toInteger(), document->peakBytes);
        QCOMPARE(nanoseconds(run[QStringLiteral("step_time_ms")]), appStepNs);
        const QJsonObject reportPeak = run[QStringLiteral("summary")].toObject()[QStringLiteral("peak")].toObject();
        if (!reportPeak.isEmpty())
            QCOMPARE(layerOf(reportPeak[QStringLiteral("layer")]), appLayer);
    }
};

QTEST_GUILESS_MAIN(tst_SameFigures)
#include "tst_samefigures.moc"
