// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/import/pickle/unpickler.h"
#include "testsupport.h"

using namespace peaklens;
using namespace peaklens::pickle;

namespace {

// Prints a value as Python's repr would, more or less: enough to compare.
QString print(const Document &doc, const Value &value)
{
    switch (value.kind) {
    case Kind::None:
        return QStringLiteral("None");
    case Kind::Bool:
        return value.integer ? QStringLiteral("True") : QStringLiteral("False");
    case Kind::Int:
        return QString::number(value.integer);
    case Kind::UInt:
        return QString::number(value.unsignedInteger);
    case Kind::Float:
        return QString::number(value.real);
    case Kind::String:
        return QLatin1Char('\'') + QString::fromUtf8(value.text, value.size) + QLatin1Char('\'');
    case Kind::Bytes:
        return QStringLiteral("b'") + QString::fromLatin1(value.text, value.size) + QLatin1Char('\'');
    case Kind::List:
    case Kind::Tuple: {
        QStringList items;
        for (const Value &item : doc.items(value))
            items << print(doc, item);
        return value.kind == Kind::List ? QLatin1Char('[') + items.join(QStringLiteral(", ")) + QLatin1Char(']')
                                        : QLatin1Char('(') + items.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    case Kind::Dict: {
        QStringList items;
        const auto &pairs = doc.items(value);
        for (std::size_t i = 0; i + 1 < pairs.size(); i += 2)
            items << print(doc, pairs[i]) + QStringLiteral(": ") + print(doc, pairs[i + 1]);
        return QLatin1Char('{') + items.join(QStringLiteral(", ")) + QLatin1Char('}');
    }
    case Kind::Frame:
    case Kind::Frames:
    case Kind::Released: // only a streaming reader leaves these
        return QStringLiteral("<released>");
    }
    return {};
}

Document unpickleHex(const char *hex)
{
    Document doc;
    const QByteArray bytes = QByteArray::fromHex(hex);
    doc.bytes = FileBytes::copyOf(std::string_view(bytes.constData(), std::size_t(bytes.size())), 0);
    unpickle(doc, "test.pickle");
    return doc;
}

} // namespace

class tst_Unpickler : public QObject
{
    Q_OBJECT

private slots:
    void decodesPlainData_data()
    {
        QTest::addColumn<QByteArray>("hex");
        QTest::addColumn<QString>("value");
        // Written by Python 3.11's pickle.dumps(value, protocol=N).
        QTest::addRow("protocol 2 list") << QByteArray("80025d7100284b014b02652e") << QStringLiteral("[1, 2]");
        QTest::addRow("9-byte LONG1: 2**64 - 1") << QByteArray("80027d710058010000006171018a09ffffffffffffffff00732e")
                                                 << QStringLiteral("{'a': 18446744073709551615}");
        QTest::addRow("9-byte LONG1: 2**63")
            << QByteArray("80028a090000000000000080002e") << QStringLiteral("9223372036854775808");
        QTest::addRow("8-byte LONG1: -2**63")
            << QByteArray("80028a0800000000000000802e") << QStringLiteral("-9223372036854775808");
        QTest::addRow("protocol 4 memo shares a list")
            << QByteArray("80049513000000000000005d94285d947d948c0166944b0173616801652e")
            << QStringLiteral("[[{'f': 1}], [{'f': 1}]]");
        QTest::addRow("protocol 5 scalars") << QByteArray(
            "8005951b00000000000000284b018c02c3a99443027879944e88473ff800000000000074942e")
                                            << QString::fromUtf8("(1, 'é', b'xy', None, True, 1.5)");
    }
    void decodesPlainData()
    {
        QFETCH(QByteArray, hex);
        QFETCH(QString, value);
        const Document doc = unpickleHex(hex.constData());
        QCOMPARE(print(doc, doc.root), value);
    }

    void memoSharesTheSameContainer()
    {
        const Document doc = unpickleHex("80049513000000000000005d94285d947d948c0166944b0173616801652e");
        const auto &outer = doc.items(doc.root);
        QCOMPARE(outer.size(), std::size_t(2));
        QCOMPARE(outer[0].container, outer[1].container);
    }

    void refusesBadPickles_data()
    {
        QTest::addColumn<QByteArray>("hex");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<qint64>("offset");
        QTest::addRow("GLOBAL (an OrderedDict)")
            << QByteArray("800263636f6c6c656374696f6e730a4f726465726564446963740a71002952710158010000006171024b01732e")
            << QStringLiteral("asks to run Python code (GLOBAL)") << qint64(2);
        QTest::addRow("STACK_GLOBAL") << QByteArray("80048c016194930a") << QStringLiteral("STACK_GLOBAL") << qint64(6);
        QTest::addRow("REDUCE") << QByteArray("80024e2952") << QStringLiteral("REDUCE") << qint64(4);
        QTest::addRow("BUILD") << QByteArray("80027d7d62") << QStringLiteral("BUILD") << qint64(4);
        QTest::addRow("truncated list") << QByteArray("80025d7100284b014b") << QStringLiteral("is truncated") << qint64(8);
        QTest::addRow("no STOP") << QByteArray("80025d7100") << QStringLiteral("is truncated") << qint64(5);
        QTest::addRow("huge string length") << QByteArray("80048dffffffffffffff0f") << QStringLiteral("longer than 4 GiB")
                                            << qint64(2);
        QTest::addRow("string longer than the file")
            << QByteArray("800458ffffff00") << QStringLiteral("is truncated") << qint64(2);
        QTest::addRow("memo entry never stored") << QByteArray("8002680a2e") << QStringLiteral("memo entry 10") << qint64(2);
        QTest::addRow("memo far out of sequence")
            << QByteArray("80024e72ffffff7f2e") << QStringLiteral("far out of sequence") << qint64(3);
        QTest::addRow("pop from empty stack") << QByteArray("8002652e") << QStringLiteral("has no MARK") << qint64(2);
        QTest::addRow("append to a dict") << QByteArray("80027d4b0161") << QStringLiteral("not a list") << qint64(5);
        QTest::addRow("protocol 6") << QByteArray("80064e2e") << QStringLiteral("protocol 6") << qint64(0);
        QTest::addRow("unknown opcode") << QByteArray("8002ff") << QStringLiteral("opcode 0xff") << qint64(2);
        QTest::addRow("integer wider than 64 bits") << QByteArray("80028a0a00000000000000000001"
                                                                  "2e")
                                                    << QStringLiteral("larger than 64 bits") << qint64(2);
        QTest::addRow("two values left") << QByteArray("80024e4e2e") << QStringLiteral("2 values on its stack") << qint64(4);
    }
    void refusesBadPickles()
    {
        QFETCH(QByteArray, hex);
        QFETCH(QString, problem);
        QFETCH(qint64, offset);
        try {
            unpickleHex(hex.constData());
            QFAIL("the pickle was accepted");
        } catch (const ImportError &error) {
            QVERIFY2(QString::fromStdString(error.what()).startsWith(QStringLiteral("test.pickle: ")), error.what());
            QVERIFY2(QString::fromStdString(error.what()).contains(problem), error.what());
            QVERIFY(error.byteOffset());
            QCOMPARE(qint64(*error.byteOffset()), offset);
        }
    }

    void deepNestingNeedsNoRecursion()
    {
        // 100,000 nested lists: '(' ']' ... built with EMPTY_LIST + APPEND.
        QByteArray bytes = QByteArray::fromHex("8002");
        for (int i = 0; i < 100000; ++i)
            bytes += ']';
        for (int i = 0; i < 99999; ++i)
            bytes += 'a';
        bytes += '.';
        Document doc;
        doc.bytes = FileBytes::copyOf(std::string_view(bytes.constData(), std::size_t(bytes.size())), 0);
        unpickle(doc, "deep.pickle");
        QVERIFY(doc.root.kind == Kind::List);
    }
};

QTEST_GUILESS_MAIN(tst_Unpickler)
#include "tst_unpickler.moc"
