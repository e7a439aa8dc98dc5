// SPDX-License-Identifier: Apache-2.0
#include "core/report/jsondump.h"

#include <QTest>

using namespace peaklens;
using json = nlohmann::ordered_json;

class tst_JsonDump : public QObject
{
    Q_OBJECT

private slots:
    // A string as a trace can hold it, where the JSON puts it, and what a reader of the
    // JSON gets back.
    void stringsComeBackValid_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QByteArray>("parsed");
        const QByteArray invalid[] = {
            QByteArray("bl\xff"
                       "ock"),          // a byte no UTF-8 has
            QByteArray("caf\xe9"),      // Latin-1
            QByteArray("\xc0\xaf"),     // an overlong '/'
            QByteArray("\xed\xa0\x80"), // a surrogate
            QByteArray("cut \xe2\x82"), // a sequence cut short
        };
        const QByteArray escaped[] = {
            QByteArray("bl\\xFFock"),      QByteArray("caf\\xE9"),       QByteArray("\\xC0\\xAF"),
            QByteArray("\\xED\\xA0\\x80"), QByteArray("cut \\xE2\\x82"),
        };
        const char *names[] = {"0xFF", "Latin-1", "overlong", "surrogate", "cut short"};
        for (std::size_t i = 0; i < std::size(invalid); ++i) {
            for (const char *where : {"value", "key", "array", "nested"})
                QTest::addRow("%s in a %s", names[i], where) << invalid[i] << QString::fromLatin1(where) << escaped[i];
        }
        const QByteArray valid("blocks.0 \xe2\x86\x90 caf\xc3\xa9 \\xFF");
        for (const char *where : {"value", "key", "array", "nested"})
            QTest::addRow("valid UTF-8 in a %s is kept as it is", where) << valid << QString::fromLatin1(where) << valid;
    }
    void stringsComeBackValid()
    {
        QFETCH(QByteArray, raw);
        QFETCH(QString, where);
        QFETCH(QByteArray, parsed);
        const std::string text = raw.toStdString();
        json value = json::object();
        value["first"] = 1;
        if (where == QLatin1String("value"))
            value["name"] = text;
        else if (where == QLatin1String("key"))
            value[text] = 2;
        else if (where == QLatin1String("array"))
            value["names"] = json::array({"fine", text});
        else
            value["layers"] = json::array({json{{"name", json{{"path", text}}}}});
        value["last"] = 3;

        const std::string dumped = dumpJson(value);
        const json back = json::parse(dumped); // throws, and fails the test, on invalid JSON
        std::string found;
        if (where == QLatin1String("value"))
            found = back.at("name").get<std::string>();
        else if (where == QLatin1String("key"))
            found = std::next(back.begin()).key();
        else if (where == QLatin1String("array"))
            found = back.at("names").at(1).get<std::string>();
        else
            found = back.at("layers").at(0).at("name").at("path").get<std::string>();
        QCOMPARE(QByteArray::fromStdString(found), parsed);
        // The order a report writes its keys in stays.
        QCOMPARE(QString::fromStdString(back.begin().key()), QStringLiteral("first"));
        QCOMPARE(QString::fromStdString(std::prev(back.end()).key()), QStringLiteral("last"));
    }

    void indentIsNlohmanns()
    {
        const json value = {{"a", 1}};
        QCOMPARE(QString::fromStdString(dumpJson(value, -1)), QStringLiteral("{\"a\":1}"));
        QCOMPARE(QString::fromStdString(dumpJson(value, 2)), QStringLiteral("{\n  \"a\": 1\n}"));
    }
};

QTEST_GUILESS_MAIN(tst_JsonDump)
#include "tst_jsondump.moc"
