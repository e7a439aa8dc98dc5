// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "models/runsmodel.h"

#include "core/trace/units.h"

#include <QAbstractItemModelTester>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

RunRecord run(const QString &label, QStringList checkpoint, std::int64_t predicted, std::optional<std::int64_t> measured)
{
    RunRecord record;
    record.label = label;
    std::vector<std::string> units;
    for (const QString &unit : checkpoint)
        units.push_back(unit.toStdString());
    record.row.strategy = CheckpointStrategy::ofUnitTexts(units);
    record.row.predicted.peakBytes = predicted;
    record.row.measured.peakAllocatedBytes = measured;
    return record;
}

} // namespace

class tst_RunsModel : public QObject
{
    Q_OBJECT

private slots:
    // Rows added, replaced and reset; the measured peak carries how far the prediction
    // was from it, a failed run its outcome.
    void runsAndTheirErrors()
    {
        RunsModel model;
        QAbstractItemModelTester tester(&model);
        RunRecord baseline = run(QStringLiteral("baseline"), {}, 100 << 20, 100 << 20);
        baseline.baseline = true;
        model.resetData({baseline});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, RunsModel::CheckpointColumn).data().toString(), QStringLiteral("none"));
        QCOMPARE(model.index(0, RunsModel::MeasuredPeakColumn).data().toString(),
                 QString::fromStdString(formatBytes(100 << 20)) + QStringLiteral(" (+0.0 %)"));
        QCOMPARE(model.index(0, RunsModel::PredictedChangeColumn).data().toString(), QStringLiteral("reference"));

        // Predicted 80 MiB, measured 64 MiB: the prediction was 25 % high.
        model.append(run(QStringLiteral("rerun 1"), {QStringLiteral("blocks.0..blocks.3"), QStringLiteral("blocks.5")}, 80 << 20,
                         64 << 20));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(1, RunsModel::CheckpointColumn).data().toString(), QStringLiteral("2 unit(s)"));
        QCOMPARE(model.index(1, RunsModel::PredictedPeakColumn).data().toString(), QString::fromStdString(formatBytes(80 << 20)));
        QCOMPARE(model.index(1, RunsModel::MeasuredPeakColumn).data().toString(),
                 QString::fromStdString(formatBytes(64 << 20)) + QStringLiteral(" (+25.0 %)"));

        RunRecord failed = model.run(1);
        failed.row.outcome = "out of memory";
        failed.row.measured.peakAllocatedBytes.reset();
        model.replace(1, failed);
        QCOMPARE(model.index(1, RunsModel::RunColumn).data().toString(), QStringLiteral("rerun 1 — out of memory"));
        QCOMPARE(model.index(1, RunsModel::MeasuredPeakColumn).data().toString(), QString());

        model.resetData({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(tst_RunsModel)
#include "tst_runsmodel.moc"
