// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/plan/costmodel.h"

using namespace peaklens;
using peaklens::test::traceFrom;

namespace {

// Two blocks, each with two parts: `a` saves A = 300 and outputs x (150); `b` reads x,
// saves S = 200 and outputs o (100), the block's output. The head's backward allocates the
// gradient of blocks.1's output; each part's backward allocates the gradient of its input.
// Parameters: 1000 bytes, allocated before the step.
//   releasedByNext: blocks.1's backward frees blocks.0's output (a ReLU's input, not saved).
//   inputFreedInForward: x is freed as b's forward ends (b saves its own copy, as a cast does).
QString twoBlocks(bool releasedByNext, bool inputFreedInForward)
{
    QString text = QStringLiteral("alloc w 1000 parameter\nbegin step 1\n");
    for (int k = 0; k < 2; ++k) {
        text += QStringLiteral("begin fwd:blocks.%1\n"
                               "begin fwd:blocks.%1.a\nalloc a%1 300 activation\nalloc x%1 150 activation\nend fwd:blocks.%1.a\n"
                               "begin fwd:blocks.%1.b\nalloc b%1 200 activation\nalloc o%1 100 activation\nend fwd:blocks.%1.b\n"
                               "%2end fwd:blocks.%1\n")
                    .arg(k)
                    .arg(inputFreedInForward ? QStringLiteral("free x%1\n").arg(k) : QString());
    }
    text += QStringLiteral("alloc h 40 activation\nfree h\nalloc go1 100 gradient\n");
    for (int k = 1; k >= 0; --k) {
        const QString gradientIn = k == 1 ? QStringLiteral("go1") : QStringLiteral("gi1");
        text += QStringLiteral("begin bwd:blocks.%1\n"
                               "begin bwd:blocks.%1.b\nalloc gx%1 150 gradient\nfree b%1\n%2free %3\nend bwd:blocks.%1.b\n"
                               "begin bwd:blocks.%1.a\nalloc gi%1 100 gradient\nfree a%1\n%4free gx%1\n%5end bwd:blocks.%1.a\n"
                               "end bwd:blocks.%1\n")
                    .arg(k)
                    .arg(releasedByNext && k == 0 ? QString() : QStringLiteral("free o%1\n").arg(k), gradientIn,
                         inputFreedInForward ? QString() : QStringLiteral("free x%1\n").arg(k),
                         releasedByNext && k == 1 ? QStringLiteral("free o0\n") : QString());
    }
    return text + QStringLiteral("free gi0\nend step 1\n");
}

} // namespace

class tst_CostModel : public QObject
{
    Q_OBJECT

private slots:
    void savingAndHeld_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("layerSaving");
        QTest::addColumn<qint64>("layerHeld");
        QTest::addColumn<qint64>("aSaving");
        QTest::addColumn<qint64>("aHeld");
        QTest::addColumn<qint64>("bSaving");
        QTest::addColumn<qint64>("bHeld");

        // blocks.0 keeps a, x, b, o (750) until its backward; o is the next block's to keep,
        // so checkpointing frees 650. Its backward frees o and the gradient of o (gi1, which
        // blocks.1's backward allocated): a checkpoint holds both until it returns, 200.
        // Part a: a and x live, x its output: 300 saved; it holds x and x's gradient (gx0),
        // 300. Part b: b and o, o its output: 200 saved, o and gi1 held, 200.
        QTest::addRow("every block kept until its backward")
            << twoBlocks(false, false) << qint64(650) << qint64(200) << qint64(300) << qint64(300) << qint64(200) << qint64(200);
        // blocks.1's backward frees o0: at blocks.0's backward o is gone, so all 650 of the
        // rest is freed and the checkpoint makes o again (held from the start: 100, then 200
        // when gi1 goes). Part b likewise: b saved (200), o and gi1 held.
        QTest::addRow("output released by the next block")
            << twoBlocks(true, false) << qint64(650) << qint64(200) << qint64(300) << qint64(300) << qint64(200) << qint64(200);
        // x is freed as blocks.0's forward ends: the layer keeps a, b, o (600), frees 500.
        // Part a's output x is gone by its backward: it frees a (300) and holds the
        // recomputed x and its gradient (300). Part b's input x was freed by the measured
        // step but a checkpoint of b keeps it (150): b frees 200 - 150 = 50 and holds x,
        // then o, then gi1: 350.
        QTest::addRow("a part's input freed in the forward")
            << twoBlocks(false, true) << qint64(500) << qint64(200) << qint64(300) << qint64(300) << qint64(50) << qint64(350);
    }
    void savingAndHeld()
    {
        QFETCH(QString, text);
        QFETCH(qint64, layerSaving);
        QFETCH(qint64, layerHeld);
        QFETCH(qint64, aSaving);
        QFETCH(qint64, aHeld);
        QFETCH(qint64, bSaving);
        QFETCH(qint64, bHeld);
        const CostModel model = buildCostModel(*traceFrom(text));
        QCOMPARE(model.layers.size(), std::size_t(2));
        const ChainLayer &layer = model.layers[0];
        QCOMPARE(layer.path, std::string("blocks.0"));
        QCOMPARE(layer.savingBytes, layerSaving);
        QCOMPARE(layer.heldInBackwardBytes, layerHeld);
        QCOMPARE(layer.parts.size(), std::size_t(2));
        QCOMPARE(layer.parts[0].path, std::string("blocks.0.a"));
        QCOMPARE(layer.parts[0].savingBytes, aSaving);
        QCOMPARE(layer.parts[0].heldInBackwardBytes, aHeld);
        QCOMPARE(layer.parts[1].path, std::string("blocks.0.b"));
        QCOMPARE(layer.parts[1].savingBytes, bSaving);
        QCOMPARE(layer.parts[1].heldInBackwardBytes, bHeld);
    }
};

QTEST_GUILESS_MAIN(tst_CostModel)
#include "tst_costmodel.moc"
