// SPDX-License-Identifier: GPL-3.0-or-later
#include "localpath.h"

#include <QTest>

using namespace peaklens::gui;

namespace {
// UTF-16 code units as written, lone surrogates included.
QString units(const char16_t *text)
{
    return QString::fromUtf16(text);
}
} // namespace

class tst_LocalPath : public QObject
{
    Q_OBJECT

private slots:
    // Every file name comes back as the same bytes; valid UTF-8 shows as the text it is.
    void roundTrips_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("shown");
        QTest::addRow("ASCII") << QByteArray("/data/run.peaklens") << QStringLiteral("/data/run.peaklens");
        QTest::addRow("UTF-8") << QByteArray("/data/caf\xC3\xA9.pickle") << QStringLiteral("/data/caf\u00E9.pickle");
        QTest::addRow("Latin-1") << QByteArray("/data/caf\xE9.pickle") << units(u"/data/caf\xDCE9.pickle");
        QTest::addRow("a lone continuation byte") << QByteArray("a\x80z") << units(u"a\xDC80z");
        QTest::addRow("an encoded surrogate") << QByteArray("\xED\xA0\x80") << units(u"\xDCED\xDCA0\xDC80");
        QTest::addRow("an overlong slash") << QByteArray("\xC0\xAF") << units(u"\xDCC0\xDCAF");
        QTest::addRow("cut before its end") << QByteArray("x\xF0\x9F\x98") << units(u"x\xDCF0\xDC9F\xDC98");
        QTest::addRow("outside the BMP") << QByteArray("\xF0\x9F\x98\x80.json") << QStringLiteral("\U0001F600.json");
    }
    void roundTrips()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, shown);
        QCOMPARE(fromLocalPath(bytes.toStdString()), shown);
        QCOMPARE(QByteArray::fromStdString(localPath(fromLocalPath(bytes.toStdString()))), bytes);
    }
};

QTEST_GUILESS_MAIN(tst_LocalPath)
#include "tst_localpath.moc"
