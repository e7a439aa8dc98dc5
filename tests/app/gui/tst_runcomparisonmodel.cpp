// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "models/runcomparisonmodel.h"

#include <QAbstractItemModelTester>

using namespace peaklens;
using namespace peaklens::gui;

class tst_RunComparisonModel : public QObject
{
    Q_OBJECT

private slots:
    void runComparisonMatchesLayersByPath()
    {
        RunComparisonModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr baseline =
            loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens"));
        const DocumentPtr other = loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        model.resetData(baseline, baseline);
        QCOMPARE(model.rowCount(), int(baseline->trace->layers.size()));
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(model.index(row, RunComparisonModel::BytesChangeColumn).data(RunComparisonModel::SortRole).toLongLong(), 0);

        model.resetData(baseline, other);
        int shared = 0;
        for (const Layer &layer : baseline->trace->layers)
            shared += other->trace->findLayer(layer.path).has_value();
        QCOMPARE(model.rowCount(), shared);
        for (int row = 0; row < model.rowCount(); ++row) {
            const QString path = model.index(row, RunComparisonModel::LayerColumn).data().toString();
            const auto layer = *other->trace->findLayer(path.toStdString());
            QCOMPARE(model.index(row, RunComparisonModel::RunBytesColumn).data(RunComparisonModel::SortRole).toLongLong(),
                     other->summary.layers[layer].activationBytes);
        }
        model.resetData(baseline, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(tst_RunComparisonModel)
#include "tst_runcomparisonmodel.moc"
