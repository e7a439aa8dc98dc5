// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "models/diffmodel.h"

#include "core/analysis/tracediff.h"
#include "core/analysis/tracesummary.h"
#include "core/trace/units.h"

#include <QAbstractItemModelTester>

using namespace peaklens;
using namespace peaklens::gui;

class tst_DiffModel : public QObject
{
    Q_OBJECT

private slots:
    // The rows of two traces' diff by layer: each row's figures, its signed delta, and the
    // sort values the table sorts by.
    void rowsShowTheDiff()
    {
        DiffModel model;
        QAbstractItemModelTester tester(&model);
        const auto a = test::traceFrom(QStringLiteral("begin fwd:blocks.0\nalloc x 1KiB activation\nend fwd:blocks.0\n"
                                                      "begin fwd:blocks.1\nalloc y 4KiB activation\nend fwd:blocks.1\n"
                                                      "begin fwd:head\nalloc z 2KiB activation\nend fwd:head\n"));
        const auto b = test::traceFrom(QStringLiteral("begin fwd:blocks.0\nalloc x 3KiB activation\nend fwd:blocks.0\n"
                                                      "begin fwd:blocks.1\nalloc y 1KiB activation\nend fwd:blocks.1\n"
                                                      "begin fwd:norm\nalloc n 512 activation\nend fwd:norm\n"));
        const TraceDiff diff = diffTraces(*a, summarize(*a), *b, summarize(*b));
        model.resetData(diff.byLayer, QStringLiteral("Layer"));
        QCOMPARE(model.headerData(DiffModel::KeyColumn, Qt::Horizontal).toString(), QStringLiteral("Layer"));
        QCOMPARE(model.rowCount(), int(diff.byLayer.size()));
        QMap<QString, QStringList> shown;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QString key = model.index(row, DiffModel::KeyColumn).data().toString();
            shown[key] = {model.index(row, DiffModel::BytesAColumn).data().toString(),
                          model.index(row, DiffModel::BytesBColumn).data().toString(),
                          model.index(row, DiffModel::DeltaColumn).data().toString(),
                          model.index(row, DiffModel::ChangeColumn).data().toString()};
            QCOMPARE(model.index(row, DiffModel::DeltaColumn).data(DiffModel::SortRole).toLongLong(),
                     model.index(row, DiffModel::BytesBColumn).data(DiffModel::SortRole).toLongLong()
                         - model.index(row, DiffModel::BytesAColumn).data(DiffModel::SortRole).toLongLong());
        }
        QCOMPARE(shown.value(QStringLiteral("blocks.0")),
                 QStringList({QString::fromStdString(formatBytes(1024)), QString::fromStdString(formatBytes(3072)),
                              QLatin1Char('+') + QString::fromStdString(formatBytes(2048)), QStringLiteral("grew")}));
        QCOMPARE(shown.value(QStringLiteral("blocks.1")),
                 QStringList({QString::fromStdString(formatBytes(4096)), QString::fromStdString(formatBytes(1024)),
                              QString::fromStdString(formatBytes(-3072)), QStringLiteral("shrank")}));
        // What is in one trace alone says so: new in B, gone from A.
        QCOMPARE(shown.value(QStringLiteral("norm")).last(), QStringLiteral("new in B"));
        QCOMPARE(shown.value(QStringLiteral("head")).last(), QStringLiteral("gone from A"));
        model.resetData({}, QStringLiteral("Category"));
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(tst_DiffModel)
#include "tst_diffmodel.moc"
