// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "models/ranksmodel.h"

#include "core/trace/units.h"

#include <QAbstractItemModelTester>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

RankOverview rank(std::int64_t number, std::int64_t peakBytes)
{
    RankOverview overview;
    overview.file = "/runs/rank" + std::to_string(number) + ".peaklens";
    overview.rank = number;
    overview.figures.peakBytes = peakBytes;
    overview.topLayer = "blocks.3";
    overview.topLayerBytes = peakBytes / 2;
    return overview;
}

} // namespace

class tst_RanksModel : public QObject
{
    Q_OBJECT

private slots:
    // Four ranks, one with twice the others' peak: a row per rank in rank order, the
    // outlier flagged with the table's reason, the file by its name.
    void rowsPerRankWithTheOutlier()
    {
        RanksModel model;
        QAbstractItemModelTester tester(&model);
        model.resetData(crossRankTable({rank(2, 1 << 20), rank(0, 1 << 20), rank(3, 2 << 20), rank(1, 1 << 20)}));
        QCOMPARE(model.rowCount(), 4);
        for (int row = 0; row < 4; ++row)
            QCOMPARE(model.index(row, RanksModel::RankColumn).data(RanksModel::SortRole).toLongLong(), qint64(row));
        QCOMPARE(model.index(3, RanksModel::PeakColumn).data().toString(), QString::fromStdString(formatBytes(2 << 20)));
        QCOMPARE(model.index(3, RanksModel::FileColumn).data().toString(), QStringLiteral("rank3.peaklens"));
        QCOMPARE(model.index(3, RanksModel::LayerColumn).data().toString(),
                 QStringLiteral("blocks.3 (%1)").arg(QString::fromStdString(formatBytes(1 << 20))));
        for (int row = 0; row < 3; ++row)
            QVERIFY(!model.index(row, RanksModel::OutlierColumn).data(RanksModel::SortRole).toBool());
        QVERIFY(model.index(3, RanksModel::OutlierColumn).data(RanksModel::SortRole).toBool());
        QCOMPARE(model.index(3, RanksModel::OutlierColumn).data().toString(),
                 QString::fromStdString(model.table().rows[3].reason));
        QVERIFY(model.index(3, RanksModel::OutlierColumn).data().toString().contains(QStringLiteral("above")));
        QCOMPARE(model.index(3, RanksModel::ReservedColumn).data().toString(), QStringLiteral("—"));
        model.resetData({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(tst_RanksModel)
#include "tst_ranksmodel.moc"
