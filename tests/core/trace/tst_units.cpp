// SPDX-License-Identifier: Apache-2.0
#include "core/trace/units.h"
#include "testsupport.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

class tst_Units : public QObject
{
    Q_OBJECT

private slots:
    void formatBytes_data()
    {
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<QString>("text");
        QTest::addRow("bytes stay exact") << qint64(1023) << QStringLiteral("1023 B");
        QTest::addRow("one KiB") << qint64(1024) << QStringLiteral("1.000 KiB");
        QTest::addRow("1.5 MiB") << qint64(1572864) << QStringLiteral("1.500 MiB");
        QTest::addRow("tens keep two decimals") << qint64(12LL << 30) << QStringLiteral("12.00 GiB");
        QTest::addRow("hundreds keep one") << qint64(256LL << 20) << QStringLiteral("256.0 MiB");
        QTest::addRow("negative") << qint64(-2048) << QStringLiteral("-2.000 KiB");
    }
    void formatBytes()
    {
        QFETCH(qint64, bytes);
        QFETCH(QString, text);
        QCOMPARE(qs(peaklens::formatBytes(bytes)), text);
    }

    void parseBytes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("bytes"); // -1: not a size
        QTest::addRow("bare number") << QStringLiteral("4096") << qint64(4096);
        QTest::addRow("binary units") << QStringLiteral("6GiB") << qint64(6LL << 30);
        QTest::addRow("space and fraction") << QStringLiteral("1.5 MiB") << qint64(1572864);
        QTest::addRow("decimal units") << QStringLiteral("2GB") << qint64(2000000000);
        QTest::addRow("unknown unit") << QStringLiteral("3 parsecs") << qint64(-1);
        QTest::addRow("not a number") << QStringLiteral("lots") << qint64(-1);
        QTest::addRow("overflow") << QStringLiteral("1e30 GiB") << qint64(-1);
    }
    void parseBytes()
    {
        QFETCH(QString, text);
        QFETCH(qint64, bytes);
        const auto parsed = peaklens::parseBytes(ss(text));
        QCOMPARE(parsed.value_or(-1), bytes);
    }

    void durations_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("ns");
        QTest::addColumn<QString>("formatted");
        QTest::addRow("nanoseconds") << QStringLiteral("750") << qint64(750) << QStringLiteral("750 ns");
        QTest::addRow("microseconds") << QStringLiteral("12.5us") << qint64(12500) << QStringLiteral("12.50 us");
        QTest::addRow("milliseconds") << QStringLiteral("4ms") << qint64(4000000) << QStringLiteral("4.000 ms");
        QTest::addRow("seconds") << QStringLiteral("1.25s") << qint64(1250000000) << QStringLiteral("1.250 s");
    }
    void durations()
    {
        QFETCH(QString, text);
        QFETCH(qint64, ns);
        QFETCH(QString, formatted);
        QCOMPARE(peaklens::parseDuration(ss(text)).value_or(-1), ns);
        QCOMPARE(qs(peaklens::formatDuration(ns)), formatted);
    }
};

QTEST_GUILESS_MAIN(tst_Units)
#include "tst_units.moc"
