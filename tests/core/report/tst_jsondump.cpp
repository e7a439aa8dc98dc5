// SPDX-License-Identifier: Apache-2.0
#include "core/report/jsondump.h"
#include "core/report/jsonwriter.h"

#include <cmath>
#include <limits>

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

    // The writer lays text out as nlohmann's dump does, for every kind of value, nested and
    // empty containers, and escapes; rows on one line where asked.
    void writerMatchesNlohmannsLayout_data()
    {
        QTest::addColumn<int>("indent");
        QTest::addRow("indented") << 2;
        QTest::addRow("one line") << -1;
        QTest::addRow("four spaces") << 4;
    }
    void writerMatchesNlohmannsLayout()
    {
        QFETCH(int, indent);
        const std::string control{"tab\t quote\" back\\ bell\x07 nul", 20};
        const json tree = {{"int", -5},
                           {"unsigned", std::uint64_t(18446744073709551615ull)},
                           {"double", 0.25},
                           {"whole double", 3.0},
                           {"true", true},
                           {"null", nullptr},
                           {"empty", json::object()},
                           {"none", json::array()},
                           {control, control},
                           {"list", json::array({1, json::array({json::object(), "x"}), json{{"k", "v"}}})}};
        JsonWriter out(indent);
        out.beginObject()
            .member("int", -5)
            .member("unsigned", std::uint64_t(18446744073709551615ull))
            .member("double", 0.25)
            .member("whole double", 3.0)
            .member("true", true)
            .key("null")
            .null()
            .key("empty")
            .beginObject()
            .endObject()
            .key("none")
            .beginArray()
            .endArray()
            .member(control, control)
            .key("list")
            .beginArray()
            .value(1)
            .beginArray()
            .beginObject()
            .endObject()
            .value("x")
            .endArray()
            .beginObject()
            .member("k", "v")
            .endObject()
            .endArray()
            .endObject();
        QCOMPARE(QString::fromStdString(out.text()), QString::fromStdString(tree.dump(indent)));
        QCOMPARE(QString::fromStdString(dumpJson(tree, indent)), QString::fromStdString(tree.dump(indent)));
    }

    void writerRowsOnOneLine()
    {
        JsonWriter out;
        out.beginObject().key("steps").beginArray();
        for (int step = 0; step < 2; ++step)
            out.beginObject(true).member("number", step).key("parts").beginArray().value(1).value(2).endArray().endObject();
        out.endArray().endObject();
        QCOMPARE(QString::fromStdString(out.text()), QStringLiteral("{\n  \"steps\": [\n    {\"number\": 0, \"parts\": [1, 2]},\n"
                                                                    "    {\"number\": 1, \"parts\": [1, 2]}\n  ]\n}"));
        QCOMPARE(json::parse(out.text()).at("steps").at(1).at("parts").at(1).get<int>(), 2);
    }

    // Doubles: the shortest text that reads back as the same number; whole ones still read
    // as doubles; what JSON cannot hold is null.
    void writerDoubles_data()
    {
        QTest::addColumn<double>("number");
        QTest::addColumn<QString>("text");
        QTest::addRow("a fraction") << 7.817523 << QStringLiteral("7.817523");
        QTest::addRow("whole") << 2.0 << QStringLiteral("2.0");
        QTest::addRow("negative") << -0.5 << QStringLiteral("-0.5");
        QTest::addRow("tiny") << 1.5e-7 << QStringLiteral("1.5e-07");
        QTest::addRow("not a number") << std::nan("") << QStringLiteral("null");
        QTest::addRow("infinite") << std::numeric_limits<double>::infinity() << QStringLiteral("null");
    }
    void writerDoubles()
    {
        QFETCH(double, number);
        QFETCH(QString, text);
        JsonWriter out;
        out.value(number);
        QCOMPARE(QString::fromStdString(out.text()), text);
        if (std::isfinite(number))
            QCOMPARE(json::parse(out.text()).get<double>(), number);
    }
};

QTEST_GUILESS_MAIN(tst_JsonDump)
#include "tst_jsondump.moc"
