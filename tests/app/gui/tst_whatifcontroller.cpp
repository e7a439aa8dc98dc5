// SPDX-License-Identifier: GPL-3.0-or-later
// The toggles' one owner, without a window: the layer table's ticks, a strategy and a
// followed trace's growth all change the same schedule, and each change is predicted.
#include "testsupport.h"

#include "models/layermodel.h"
#include "whatifcontroller.h"
#include "widgets/whatifbar.h"

#include "core/plan/planner.h"
#include "core/trace/units.h"

#include <QSignalSpy>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

struct Fixture
{
    LayerModel layers;
    WhatIfBar bar;
    WhatIfController toggles{&layers, &bar};
    QSignalSpy predicted{&toggles, &WhatIfController::predicted};

    // The what-if bar shows this predicted peak.
    bool showsPeak(std::int64_t bytes) const
    {
        return bar.predictedPeakText().contains(QString::fromStdString(formatBytes(bytes)));
    }

    std::vector<SeriesPoint> lastCurve() const { return predicted.last().at(0).value<std::vector<SeriesPoint>>(); }
    QStringList lastNotes() const { return predicted.last().at(1).toStringList(); }
};

} // namespace

class tst_WhatIfController : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { qRegisterMetaType<std::vector<SeriesPoint>>(); }

    // A tick in the table is the user's: the bar says custom, the schedule and the
    // prediction follow.
    void aTickIsPredicted()
    {
        Fixture f;
        const DocumentPtr document = loadDocument(kSample);
        f.toggles.setDocument(document);
        QVERIFY(f.toggles.schedule().empty());
        QVERIFY(f.lastCurve().empty());
        const CostModel &model = *document->model;
        QVERIFY(f.layers.setData(f.layers.indexOfLayer(model.layers[1].layer, LayerModel::CheckpointColumn), Qt::Checked,
                                 Qt::CheckStateRole));
        QCOMPARE(f.toggles.schedule(), f.layers.schedule());
        QCOMPARE(f.toggles.schedule().size(), std::size_t(1));
        QCOMPARE(f.bar.strategy(), WhatIfBar::Strategy::Custom);
        QVERIFY(!f.lastCurve().empty());
        const Prediction prediction = predict(model, f.toggles.schedule());
        QVERIFY2(f.showsPeak(prediction.peakBytes), qPrintable(f.bar.predictedPeakText()));
    }

    // A strategy ticks its plan's units (segments too) and shows them in the table.
    void aStrategyTicksItsUnits()
    {
        Fixture f;
        const DocumentPtr document = loadDocument(kSample);
        f.toggles.setDocument(document);
        f.toggles.setStrategy(CheckpointStrategy::parse("sqrt"));
        const Plan plan = planForStrategy(*document->model, "sqrt");
        QCOMPARE(f.toggles.schedule(), plan.schedule);
        QCOMPARE(f.layers.checkpoint(), plan.checkpoint);
        QVERIFY(!f.lastCurve().empty());
        QVERIFY2(f.showsPeak(plan.prediction.peakBytes), qPrintable(f.bar.predictedPeakText()));
    }

    // The same trace grown while written keeps the toggles; another clears them.
    void growthKeepsTheToggles()
    {
        Fixture f;
        const DocumentPtr document = loadDocument(kSample);
        f.toggles.setDocument(document);
        f.toggles.setStrategy(CheckpointStrategy::parse("all"));
        const CheckpointSchedule all = f.toggles.schedule();
        QVERIFY(!all.empty());
        f.toggles.setDocument(loadDocument(kSample), true);
        QCOMPARE(f.toggles.schedule(), all);
        QCOMPARE(f.layers.schedule(), all);
        f.toggles.setDocument(loadDocument(kSample));
        QVERIFY(f.toggles.schedule().empty());
        QVERIFY(f.layers.schedule().empty());
    }

    // Without a model there is nothing to toggle, and the notes say why.
    void noModelSaysWhy()
    {
        Fixture f;
        const DocumentPtr document =
            loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_state_only_two_devices.pickle.gz"));
        QVERIFY(!document->model);
        f.toggles.setDocument(document);
        QVERIFY(f.lastCurve().empty());
        QVERIFY2(f.lastNotes().join(u' ').startsWith(QStringLiteral("No what-if: ")), qPrintable(f.lastNotes().join(u' ')));
        f.toggles.setStrategy(CheckpointStrategy::parse("all"));
        QVERIFY(f.toggles.schedule().empty());
    }
};

QTEST_MAIN(tst_WhatIfController)
#include "tst_whatifcontroller.moc"
