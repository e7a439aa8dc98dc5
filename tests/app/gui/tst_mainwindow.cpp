#include "testsupport.h"

#include "mainwindow.h"
#include "models/layermodel.h"
#include "models/runcomparisonmodel.h"
#include "models/runsmodel.h"
#include "replayprocess.h"
#include "widgets/whatifbar.h"

#include "core/plan/predictor.h"
#include "core/trace/units.h"

#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

bool load(MainWindow &window, const QString &path)
{
    QSignalSpy loaded(&window, &MainWindow::documentLoaded);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openFile(path);
    return QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 60000) && loaded.count() == 1;
}

} // namespace

class tst_MainWindow : public QObject
{
    Q_OBJECT

private slots:
    void togglingALayerShowsThePredictorsPeak()
    {
        MainWindow window;
        window.show();
        QVERIFY(load(window, kSample));
        const DocumentPtr document = window.document();
        QVERIFY(document->costModel);
        LayerModel *layers = window.layerModel();
        QCOMPARE(layers->rowCount(), 5); // embed, blocks, ln_f, head, loss; the blocks below "blocks"

        const auto &chain = document->costModel->layers;
        QVERIFY(layers->setData(layers->indexOfLayer(chain[2].layer, LayerModel::CheckpointColumn), Qt::Checked,
                                Qt::CheckStateRole));
        std::vector<bool> toggles(chain.size(), false);
        toggles[2] = true;
        const Prediction prediction = predict(*document->costModel, toggles);
        const QString expected = QStringLiteral("peak ") + QString::fromStdString(formatBytes(prediction.peakBytes));
        QVERIFY2(window.whatIfBar()->predictedPeakText().contains(expected), qPrintable(window.whatIfBar()->predictedPeakText()));
        QVERIFY(prediction.peakBytes < predict(*document->costModel, {}).peakBytes);
    }

    // The whole loop on the CPU: toggle, rerun with peaklens-replay, find the measured run.
    void rerunJoinsTheRunsList()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        MainWindow window;
        QVERIFY(load(window, kSample));
        QCOMPARE(window.runsModel()->rowCount(), 1); // the baseline
        window.setCheckpointStrategy(QStringLiteral("all"));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(300000));
        QCOMPARE(window.runsModel()->rowCount(), 2);
        const RunRecord &run = window.runsModel()->run(1);
        QVERIFY2(run.outcome.isEmpty(), qPrintable(run.outcome));
        QCOMPARE(run.checkpoint.size(), qsizetype(window.document()->costModel->layers.size()));
        QVERIFY(run.measuredPeakBytes && run.measuredStepMs);
        QVERIFY(*run.measuredPeakBytes < *window.runsModel()->run(0).measuredPeakBytes);
        QVERIFY(run.document);
        QCOMPARE(QString::fromStdString(run.document->trace->metaValue("checkpoint")), run.checkpoint.join(QLatin1Char(',')));
        // The comparison shows the checkpointed blocks keeping less for the backward pass.
        RunComparisonModel *comparison = window.comparisonModel();
        QVERIFY(comparison->rowCount() > 0);
        int smaller = 0;
        for (int row = 0; row < comparison->rowCount(); ++row) {
            if (comparison->index(row, RunComparisonModel::LayerColumn).data().toString().startsWith(QStringLiteral("blocks."))
                && comparison->index(row, RunComparisonModel::BytesChangeColumn).data(RunComparisonModel::SortRole).toLongLong() < 0)
                ++smaller;
        }
        QCOMPARE(smaller, int(run.checkpoint.size()));
    }

    void aTraceWithoutSpecCannotRerun()
    {
        const DocumentPtr document = loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        QVERIFY(ReplayProcess::unavailableReason(*document).contains(QStringLiteral("not recorded by peaklens-replay")));
    }

    void aBadFileKeepsTheWindowUsable()
    {
        MainWindow window;
        QVERIFY(load(window, kSample));
        const DocumentPtr before = window.document();
        QTemporaryDir directory;
        const QString bad = directory.filePath(QStringLiteral("broken.peaklens"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("SQLite format 3\0 but nothing else", 34);
        file.close();
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openFile(bad);
        QVERIFY(failed.wait(30000));
        QVERIFY2(failed.front().front().toString().startsWith(bad), qPrintable(failed.front().front().toString()));
        QCOMPARE(window.document(), before);
        QVERIFY(load(window, kSample)); // and it opens the next one
    }

    void screenshotWritesAPicture()
    {
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("window.png"));
        const auto run = test::runTool(QStringLiteral("peaklens"), {QStringLiteral("--screenshot"), out, kSample});
        QCOMPARE(run.exitCode, 0);
        const QImage image(out);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 800 && image.height() >= 500);
    }

    // The PDF has pages, and its text says the peak the summary says.
    void exportReportWritesAPdf()
    {
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("report.pdf"));
        const auto run = test::runTool(QStringLiteral("peaklens"), {QStringLiteral("--export-report"), out, kSample});
        QCOMPARE(run.exitCode, 0);
        QProcess info;
        info.start(QStringLiteral("pdfinfo"), {out});
        QVERIFY2(info.waitForFinished(30000) && info.exitCode() == 0, "pdfinfo (poppler-utils) could not read the PDF");
        const QByteArray pages = info.readAllStandardOutput();
        QVERIFY2(QRegularExpression(QStringLiteral("Pages:\\s+[1-9]")).match(QString::fromUtf8(pages)).hasMatch(), pages.constData());
        QProcess text;
        text.start(QStringLiteral("pdftotext"), {out, QStringLiteral("-")});
        QVERIFY(text.waitForFinished(30000) && text.exitCode() == 0);
        const DocumentPtr document = loadDocument(kSample);
        const auto &peak = document->summary.peak.devices[*document->summary.peak.primary];
        QVERIFY(text.readAllStandardOutput().contains(QByteArray::fromStdString(formatBytes(peak.allocatedBytes))));
    }

    void exportFromTheWindow()
    {
        MainWindow window;
        QVERIFY(load(window, kSample));
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("report.html"));
        QSignalSpy exported(&window, &MainWindow::reportExported);
        window.exportReportTo(out);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.front().at(1).toString().isEmpty(), qPrintable(exported.front().at(1).toString()));
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("PeakLens memory report"));
        window.exportReportTo(QStringLiteral("/nonexistent/report.pdf"));
        QVERIFY(exported.wait(60000));
        QVERIFY(exported.last().at(1).toString().contains(QStringLiteral("/nonexistent/report.pdf")));
    }

    void screenshotOfAMissingFileFails()
    {
        QTemporaryDir directory;
        const auto run = test::runTool(QStringLiteral("peaklens"), {QStringLiteral("--screenshot"),
                                                                    directory.filePath(QStringLiteral("x.png")),
                                                                    QStringLiteral("/nonexistent/trace.peaklens")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains("/nonexistent/trace.peaklens"));
    }
};

QTEST_MAIN(tst_MainWindow)
#include "tst_mainwindow.moc"
