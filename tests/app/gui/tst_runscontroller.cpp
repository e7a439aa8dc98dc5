// SPDX-License-Identifier: GPL-3.0-or-later
// The Runs table's rows without a window: the baseline row of a trace, a rerun of the
// toggles measured beside its prediction, and a rerun whose trace was closed dropped.
#include "testsupport.h"

#include "documentloader.h"
#include "models/layermodel.h"
#include "models/runsmodel.h"
#include "replayprocess.h"
#include "runscontroller.h"
#include "whatifcontroller.h"
#include "widgets/runspane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/plan/planner.h"

#include <QFile>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

struct Fixture
{
    QWidget window; // the parent of the dialogs; never shown
    QStatusBar status;
    DocumentLoader loader;
    RunsPane pane;
    LayerModel layers;
    WhatIfBar bar;
    WhatIfController toggles{&layers, &bar};
    TimelineView timeline;
    RunsController runs{&loader, &pane, &toggles, &timeline, &status, &window};

    // The sample copied into `directory` (a rerun is kept beside its trace), opened.
    DocumentPtr openCopy(const QTemporaryDir &directory)
    {
        const QString trace = directory.filePath(QStringLiteral("training-step.peaklens"));
        return QFile::copy(kSample, trace) ? open(trace) : nullptr;
    }

    DocumentPtr open(const QString &path)
    {
        const DocumentPtr document = loadDocument(path);
        runs.closeSession();
        toggles.setDocument(document);
        runs.showDocument(document);
        return document;
    }
};

} // namespace

class tst_RunsController : public QObject
{
    Q_OBJECT

private slots:
    // The trace itself is the first row: the model's own step against what it measured.
    void theBaselineRowIsTheTrace()
    {
        Fixture f;
        const DocumentPtr document = f.open(kSample);
        QCOMPARE(f.runs.model()->rowCount(), 1);
        const RunRecord &baseline = f.runs.model()->run(0);
        QVERIFY(baseline.baseline);
        QCOMPARE(baseline.row.predicted.peakBytes, predict(*document->model, CheckpointSchedule{}).peakBytes);
        QVERIFY(baseline.row.measured.peakAllocatedBytes);
        QCOMPARE(baseline.row.measured.stepTimesMs, document->stepTimesMs());
        QVERIFY(!f.runs.isRerunning());
    }

    // A rerun of the toggles is a row with their prediction and its measurement.
    void aRerunIsMeasuredBesideItsPrediction()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        Fixture f;
        const DocumentPtr document = f.openCopy(directory);
        QVERIFY(document);
        f.toggles.setStrategy(CheckpointStrategy::parse("every:2"));
        QSignalSpy finished(&f.runs, &RunsController::rerunFinished);
        QSignalSpy busy(&f.runs, &RunsController::busy);
        f.runs.rerun();
        QCOMPARE(busy.count(), 1);
        QVERIFY(f.runs.isRerunning());
        QVERIFY(finished.wait(300000));
        QCOMPARE(f.runs.model()->rowCount(), 2);
        const RunRecord &run = f.runs.model()->run(1);
        QVERIFY2(run.outcome().isEmpty(), qPrintable(run.outcome()));
        QCOMPARE(run.row.predicted.peakBytes, planForStrategy(*document->model, "every:2").prediction.peakBytes);
        QVERIFY(run.row.measured.peakAllocatedBytes);
        QVERIFY(*run.row.measured.peakAllocatedBytes < *f.runs.model()->run(0).row.measured.peakAllocatedBytes);
        QVERIFY(run.document);
        QVERIFY(!f.runs.isRerunning());
    }

    // A rerun of a trace that was closed meanwhile lands in no table.
    void aRerunOfAClosedTraceIsDropped()
    {
        if (ReplayProcess::executable().isEmpty())
            QSKIP("peaklens-replay is not built (LibTorch missing); nothing to rerun");
        QTemporaryDir directory;
        Fixture f;
        QVERIFY(f.openCopy(directory));
        f.toggles.setStrategy(CheckpointStrategy::parse("all"));
        QSignalSpy idle(&f.runs, &RunsController::idle);
        QSignalSpy finished(&f.runs, &RunsController::rerunFinished);
        f.runs.rerun();
        f.open(kSample);
        QVERIFY(idle.count() > 0 || idle.wait(60000));
        QCOMPARE(finished.count(), 0);
        QCOMPARE(f.runs.model()->rowCount(), 1);
        QVERIFY(!f.runs.isRerunning());
    }
};

QTEST_MAIN(tst_RunsController)
#include "tst_runscontroller.moc"
