// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/trace/tracebuilder.h"
#include "core/trace/visibletext.h"
#include "testsupport.h"

using namespace peaklens;

namespace {
std::string bytesOf(const QByteArray &array)
{
    return std::string(array.constData(), static_cast<std::size_t>(array.size()));
}
} // namespace

class tst_VisibleText : public QObject
{
    Q_OBJECT

private slots:
    void rewritesWhatCannotBeShown_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("valid");   // validUtf8
        QTest::addColumn<QByteArray>("visible"); // visibleText
        QTest::addRow("plain ASCII") << QByteArray("blocks.3.attn") << QByteArray("blocks.3.attn") << QByteArray("blocks.3.attn");
        QTest::addRow("UTF-8 kept") << QByteArray("r\xC3\xA9seau.\xE2\x82\xAC") << QByteArray("r\xC3\xA9seau.\xE2\x82\xAC")
                                    << QByteArray("r\xC3\xA9seau.\xE2\x82\xAC");
        QTest::addRow("Latin-1 byte") << QByteArray("caf\xE9.pickle") << QByteArray("caf\\xE9.pickle")
                                      << QByteArray("caf\\xE9.pickle");
        QTest::addRow("truncated sequence") << QByteArray("a\xE2\x82") << QByteArray("a\\xE2\\x82") << QByteArray("a\\xE2\\x82");
        QTest::addRow("overlong slash") << QByteArray("\xC0\xAF") << QByteArray("\\xC0\\xAF") << QByteArray("\\xC0\\xAF");
        QTest::addRow("surrogate") << QByteArray("\xED\xA0\x80") << QByteArray("\\xED\\xA0\\x80")
                                   << QByteArray("\\xED\\xA0\\x80");
        QTest::addRow("above U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << QByteArray("\\xF4\\x90\\x80\\x80")
                                        << QByteArray("\\xF4\\x90\\x80\\x80");
        QTest::addRow("terminal escape") << QByteArray("x\x1b[31mred") << QByteArray("x\x1b[31mred")
                                         << QByteArray("x\\x1B[31mred");
        QTest::addRow("newline and tab") << QByteArray("a\nb\tc") << QByteArray("a\nb\tc") << QByteArray("a\\x0Ab\\x09c");
        QTest::addRow("DEL") << QByteArray("a\x7f") << QByteArray("a\x7f") << QByteArray("a\\x7F");
        QTest::addRow("C1 control") << QByteArray("a\xC2\x9B") << QByteArray("a\xC2\x9B") << QByteArray("a\\u{009B}");
        QTest::addRow("right-to-left override")
            << QByteArray("report\xE2\x80\xAEtxt.exe") << QByteArray("report\xE2\x80\xAEtxt.exe")
            << QByteArray("report\\u{202E}txt.exe");
        QTest::addRow("isolate and zero width") << QByteArray("\xE2\x81\xA6x\xE2\x80\x8B")
                                                << QByteArray("\xE2\x81\xA6x\xE2\x80\x8B") << QByteArray("\\u{2066}x\\u{200B}");
        QTest::addRow("byte-order mark") << QByteArray("\xEF\xBB\xBFname") << QByteArray("\xEF\xBB\xBFname")
                                         << QByteArray("\\u{FEFF}name");
        QTest::addRow("NUL") << QByteArray("a\0b", 3) << QByteArray("a\0b", 3) << QByteArray("a\\x00b");
    }
    void rewritesWhatCannotBeShown()
    {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, valid);
        QFETCH(QByteArray, visible);
        QCOMPARE(QByteArray::fromStdString(validUtf8(bytesOf(input))), valid);
        QCOMPARE(QByteArray::fromStdString(visibleText(bytesOf(input))), visible);
        // Idempotent, and what it returns is valid UTF-8 that shows as it is.
        QCOMPARE(visibleText(visibleText(bytesOf(input))), visibleText(bytesOf(input)));
        QVERIFY(isVisibleText(visibleText(bytesOf(input))));
        QCOMPARE(isVisibleText(bytesOf(input)), input == visible);
        QCOMPARE(validUtf8(bytesOf(valid)), bytesOf(valid));
    }

    // The trace model holds names as shown and metadata as valid UTF-8, whatever the importer gave.
    void builderStoresShowableNames()
    {
        TraceBuilder builder;
        builder.setMeta("source.path", "/data/caf\xE9\n\xE2\x80\xAE.pickle");
        const std::uint32_t layer = builder.layer("blocks\xE2\x80\xAE.0.attn\x1b");
        builder.setLayerInfo(layer,
                             "Lin\xFF"
                             "ear",
                             0);
        builder.stacks().internStack({Frame{"f\x1b[2J", "train\xE9.py", 3}});
        builder.kernelName("gemm\xC2\x85");
        const auto trace = builder.finish();
        QCOMPARE(trace->metaValue("source.path"), std::string("/data/caf\\xE9\n\\u{202E}.pickle"));
        QCOMPARE(trace->layers[layer].path, std::string("blocks\\u{202E}.0.attn\\x1B"));
        QCOMPARE(trace->layers[trace->layers[layer].parent].path, std::string("blocks\\u{202E}.0"));
        QCOMPARE(trace->layers[layer].kind, std::string("Lin\\xFFear"));
        QCOMPARE(trace->stacks.frames().back().function, std::string("f\\x1B[2J"));
        QCOMPARE(trace->stacks.frames().back().file, std::string("train\\xE9.py"));
        QCOMPARE(trace->kernelNames.back(), std::string("gemm\\u{0085}"));
    }

    void builderRefusesOverlongLayerPaths()
    {
        TraceBuilder builder;
        builder.layer(std::string(TraceBuilder::kMaxLayerPathBytes, 'a'));
        try {
            builder.layer(std::string(TraceBuilder::kMaxLayerPathBytes + 1, 'b'));
            QFAIL("an overlong layer path was accepted");
        } catch (const Error &error) {
            QVERIFY2(std::string(error.what()).find("4097 bytes long") != std::string::npos, error.what());
        }
    }
};

QTEST_GUILESS_MAIN(tst_VisibleText)
#include "tst_visibletext.moc"
