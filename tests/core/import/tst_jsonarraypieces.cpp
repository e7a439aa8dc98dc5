// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/error.h"
#include "core/import/jsonarraypieces.h"

#include <nlohmann/json.hpp>

using namespace peaklens;

namespace {

// Reads `text`'s array in pieces of `pieceBytes`, a piece parsed by nlohmann::json as the
// Kineto importer parses it with simdjson; returns the elements in order, each printed,
// and the pieces read.
struct Read
{
    QStringList elements;
    int pieces = 0;
    int refusedGuesses = 0;
};

Read readPieces(std::string text, std::size_t pieceBytes)
{
    JsonScanner scanner(text, "test.json");
    Read read;
    readArrayInPieces({text.data(), text.size()}, scanner, pieceBytes, [&](std::size_t offset, std::size_t length, bool exact) {
        const auto piece = nlohmann::json::parse(text.substr(offset, length), nullptr, /*allow_exceptions=*/false);
        if (piece.is_discarded()) {
            if (exact)
                throw Error("an exact piece did not parse");
            ++read.refusedGuesses;
            return false;
        }
        ++read.pieces;
        for (const auto &element : piece)
            read.elements << QString::fromStdString(element.dump());
        return true;
    });
    if (scanner.position() != text.size())
        throw Error("the scanner did not stop after the array");
    return read;
}

} // namespace

class tst_JsonArrayPieces : public QObject
{
    Q_OBJECT

private slots:
    void everyElementOnce_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("pieceBytes");
        QTest::addColumn<QString>("elements"); // joined with '|'
        QTest::addColumn<int>("pieces");
        QTest::addColumn<int>("refusedGuesses");

        QTest::addRow("empty") << QStringLiteral("[ ]") << 4 << QString() << 0 << 0;
        QTest::addRow("one piece") << QStringLiteral("[{\"a\":1}, {\"b\":2}]") << 1000 << QStringLiteral("{\"a\":1}|{\"b\":2}")
                                   << 1 << 0;
        QTest::addRow("a piece per element") << QStringLiteral("[{\"a\":1}, {\"b\":2}, {\"c\":3}]") << 1
                                             << QStringLiteral("{\"a\":1}|{\"b\":2}|{\"c\":3}") << 3 << 0;
        // The text "}, {" inside a string is no boundary: that guess cannot parse and the
        // piece is cut exactly.
        QTest::addRow("a boundary guessed inside a string")
            << QStringLiteral("[{\"s\":\"x}, {y\"}, {\"b\":2}]") << 2 << QStringLiteral("{\"s\":\"x}, {y\"}|{\"b\":2}") << 2 << 1;
        // Inside a nested list of objects, likewise.
        QTest::addRow("a boundary guessed inside a nested value")
            << QStringLiteral("[{\"n\":[{\"a\":1}, {\"a\":2}]}, {\"b\":2}]") << 2
            << QStringLiteral("{\"n\":[{\"a\":1},{\"a\":2}]}|{\"b\":2}") << 2 << 1;
    }
    void everyElementOnce()
    {
        QFETCH(QString, text);
        QFETCH(int, pieceBytes);
        QFETCH(QString, elements);
        QFETCH(int, pieces);
        QFETCH(int, refusedGuesses);
        const Read read = readPieces(text.toStdString(), static_cast<std::size_t>(pieceBytes));
        QCOMPARE(read.elements.join(QLatin1Char('|')), elements);
        QCOMPARE(read.pieces, pieces);
        QCOMPARE(read.refusedGuesses, refusedGuesses);
    }

    void truncatedArraySaysSo()
    {
        try {
            readPieces("[{\"a\":1}, {\"b\":", 1);
            QFAIL("a truncated array was read");
        } catch (const ImportError &error) {
            QVERIFY2(std::string(error.what()).find("truncated") != std::string::npos, error.what());
            QVERIFY2(std::string(error.what()).find("test.json") != std::string::npos, error.what());
        }
    }
};

QTEST_GUILESS_MAIN(tst_JsonArrayPieces)
#include "tst_jsonarraypieces.moc"
