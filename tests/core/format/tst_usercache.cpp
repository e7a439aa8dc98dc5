// SPDX-License-Identifier: Apache-2.0
#include "core/format/usercache.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace peaklens;
using namespace peaklens::test;

class tst_UserCache : public QObject
{
    Q_OBJECT

private slots:
    // A cache of copies: three old ones, one used two hours ago, one just made, and things
    // that are not copies (another process's temporary, the Python environment beside).
    // Each row names the limit, the copy used again before the new one was made, and the
    // files left after.
    void theCopiesLeastRecentlyUsedGoFirst_data()
    {
        QTest::addColumn<QByteArray>("limit"); // PEAKLENS_CACHE_LIMIT
        QTest::addColumn<QString>("usedAgain");
        QTest::addColumn<QStringList>("left");
        const QStringList everything = {QStringLiteral("copies/oldest.peaklens"), QStringLiteral("remote/old.peaklens"),
                                        QStringLiteral("copies/older.peaklens"), QStringLiteral("remote/today.peaklens"),
                                        QStringLiteral("remote/made.peaklens")};
        QTest::addRow("within the limit") << QByteArray("500B") << QString() << everything;
        QTest::addRow("the oldest two go") << QByteArray("300B") << QString() << everything.mid(2);
        QTest::addRow("one used again stays") << QByteArray("300B") << QStringLiteral("copies/oldest.peaklens")
                                              << QStringList{everything[0], everything[3], everything[4]};
        QTest::addRow("used today stays over the limit")
            << QByteArray("1") << QString() << QStringList{everything[3], everything[4]};
        QTest::addRow("no limit") << QByteArray("0") << QString() << everything;
        QTest::addRow("a limit that is not a size: the default") << QByteArray("lots") << QString() << everything;
    }
    void theCopiesLeastRecentlyUsedGoFirst()
    {
        QFETCH(QByteArray, limit);
        QFETCH(QString, usedAgain);
        QFETCH(QStringList, left);
        const ScopedCache cache(limit);
        const QDir at(cache.path());
        QVERIFY(placeFileUsed(at.filePath(QStringLiteral("copies/oldest.peaklens")), 100, 24 * 30));
        QVERIFY(placeFileUsed(at.filePath(QStringLiteral("remote/old.peaklens")), 100, 24 * 3));
        QVERIFY(placeFileUsed(at.filePath(QStringLiteral("copies/older.peaklens")), 100, 24 * 2));
        QVERIFY(placeFileUsed(at.filePath(QStringLiteral("remote/today.peaklens")), 100, 2));
        QVERIFY(placeFileUsed(at.filePath(QStringLiteral("remote/made.peaklens")), 100, 24 * 40)); // written with an old time
        const QStringList others = {QStringLiteral("remote/big.peaklens.partial-4242-0"),
                                    QStringLiteral("torch-2.15.0/lib/libtorch.so"), QStringLiteral("loose.peaklens")};
        for (const QString &other : others)
            QVERIFY(placeFileUsed(at.filePath(other), 1000, 24 * 60));
        // Neither a folder nor a link to nowhere is a copy, nor stops the others being read.
        QVERIFY(QDir().mkpath(at.filePath(QStringLiteral("copies/a-folder"))));
        QVERIFY(QFile::link(at.filePath(QStringLiteral("nowhere")), at.filePath(QStringLiteral("copies/a-link"))));
        if (!usedAgain.isEmpty())
            markCacheUsed(ss(at.filePath(usedAgain)));
        const std::int64_t removed = keepCacheWithinLimit(ss(at.filePath(QStringLiteral("remote/made.peaklens"))));
        QStringList found;
        for (const QString &folder : {QStringLiteral("copies"), QStringLiteral("remote")})
            for (const QString &name : QDir(at.filePath(folder)).entryList(QDir::Files))
                if (!name.contains(QStringLiteral(".partial-")))
                    found << folder + QLatin1Char('/') + name;
        QStringList expected = left;
        found.sort();
        expected.sort();
        QCOMPARE(found, expected);
        QCOMPARE(removed, std::int64_t(100) * (5 - left.size()));
        for (const QString &other : others)
            QVERIFY2(QFile::exists(at.filePath(other)), qPrintable(other));
        QVERIFY(QFileInfo(at.filePath(QStringLiteral("copies/a-folder"))).isDir());
        QVERIFY(QFileInfo(at.filePath(QStringLiteral("copies/a-link"))).isSymLink());
    }

    void theLimitReadsSizes_data()
    {
        QTest::addColumn<QByteArray>("limit");
        QTest::addColumn<qint64>("bytes");
        QTest::addRow("unset") << QByteArray() << (qint64(20) << 30);
        QTest::addRow("GiB") << QByteArray("2GiB") << (qint64(2) << 30);
        QTest::addRow("MB") << QByteArray("500MB") << qint64(500000000);
        QTest::addRow("bytes") << QByteArray("4096") << qint64(4096);
        QTest::addRow("none") << QByteArray("0") << qint64(0);
        QTest::addRow("negative") << QByteArray("-5GiB") << (qint64(20) << 30);
        QTest::addRow("not a size") << QByteArray("a lot") << (qint64(20) << 30);
    }
    void theLimitReadsSizes()
    {
        QFETCH(QByteArray, limit);
        QFETCH(qint64, bytes);
        if (limit.isNull())
            qunsetenv("PEAKLENS_CACHE_LIMIT");
        else
            qputenv("PEAKLENS_CACHE_LIMIT", limit);
        QCOMPARE(cacheLimitBytes(), bytes);
        qunsetenv("PEAKLENS_CACHE_LIMIT");
    }
};

QTEST_GUILESS_MAIN(tst_UserCache)
#include "tst_usercache.moc"
