// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/format/sqlitedatabase.h"

#include <QTest>

using namespace peaklens;

class tst_SqliteDatabase : public QObject
{
    Q_OBJECT

private slots:
    // A long statement ends as soon as its stop condition holds, and only then.
    void interruptWhenStopsARunningStatement_data()
    {
        QTest::addColumn<int>("answersBeforeStop"); // -1: never stops
        QTest::addColumn<bool>("interrupted");
        QTest::addRow("stop at once") << 0 << true;
        QTest::addRow("stop after a few answers") << 3 << true;
        QTest::addRow("never stop") << -1 << false;
    }
    void interruptWhenStopsARunningStatement()
    {
        QFETCH(int, answersBeforeStop);
        QFETCH(bool, interrupted);
        SqliteDatabase db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        int answers = 0;
        db.interruptWhen([&] { return answers++ == answersBeforeStop; });
        // Millions of virtual-machine steps: the condition is asked many times.
        auto count = db.prepare("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) "
                                "SELECT count(*) FROM n");
        if (interrupted) {
            QVERIFY_THROWS_EXCEPTION(Error, count.step());
            QCOMPARE(answers, answersBeforeStop + 1);
        } else {
            QVERIFY(count.step());
            QCOMPARE(count.integer(0), 1000000);
            QVERIFY(answers > 10);
        }
    }

    void interruptedDatabaseRunsTheNextStatement()
    {
        SqliteDatabase db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        bool stop = true;
        db.interruptWhen([&] { return stop; });
        auto count = db.prepare("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) "
                                "SELECT count(*) FROM n");
        QVERIFY_THROWS_EXCEPTION(Error, count.step());
        stop = false;
        count.reset();
        QVERIFY(count.step());
        QCOMPARE(count.integer(0), 100000);
    }
};

QTEST_GUILESS_MAIN(tst_SqliteDatabase)
#include "tst_sqlitedatabase.moc"
