// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "models/livesetmodel.h"

#include <QAbstractItemModelTester>

using namespace peaklens;
using namespace peaklens::gui;

class tst_LiveSetModel : public QObject
{
    Q_OBJECT

private slots:
    void liveSetGroupings_data()
    {
        QTest::addColumn<int>("grouping");
        QTest::addRow("layer") << int(LiveSetModel::Grouping::Layer);
        QTest::addRow("category") << int(LiveSetModel::Grouping::Category);
        QTest::addRow("allocation site") << int(LiveSetModel::Grouping::Site);
    }

    void liveSetGroupings()
    {
        QFETCH(int, grouping);
        LiveSetModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr document = loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        const LiveSet &live = *document->summary.peak.liveAtPeak;
        model.resetData(document, live, static_cast<LiveSetModel::Grouping>(grouping));
        QVERIFY(model.rowCount() > 0);
        qint64 total = 0;
        for (int row = 0; row < model.rowCount(); ++row)
            total += model.index(row, LiveSetModel::BytesColumn).data(LiveSetModel::SortRole).toLongLong();
        QCOMPARE(total, live.bytes); // every live byte is in exactly one group
        // Allocation sites carry the stack of their largest block, named by its site.
        const QVariant stack = model.index(0, LiveSetModel::NameColumn).data(LiveSetModel::StackRole);
        if (grouping == int(LiveSetModel::Grouping::Site)) {
            QVERIFY(stack.isValid());
            QCOMPARE(model.index(0, LiveSetModel::NameColumn).data().toString(),
                     QString::fromStdString(document->sites->label(document->sites->siteOf(stack.toUInt()))));
        } else {
            QVERIFY(!stack.isValid());
        }
    }
};

QTEST_MAIN(tst_LiveSetModel)
#include "tst_livesetmodel.moc"
