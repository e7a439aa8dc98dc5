// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/layerstats.h"
#include "core/error.h"
#include "core/trace/layeredits.h"

using namespace peaklens;
using namespace peaklens::test;

namespace {

const char *const kTrace = "layer net kind=Net\nlayer net.b kind=Block\n"
                           "t=0 begin fwd:net\nt=1 begin fwd:net.a\nt=2 alloc x 100\nt=3 end fwd:net.a\n"
                           "t=4 begin fwd:net.b\nt=5 alloc y 50\nt=6 begin fwd:net.b.c\nt=7 alloc z 10\nt=8 end fwd:net.b.c\n"
                           "t=9 end fwd:net.b\nt=10 end fwd:net\nt=11 free x\n";

// Each event's layer, and each layer's forward ranges.
QString describe(const Trace &trace)
{
    QStringList parts;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        const std::uint32_t layer = trace.events.layer(i);
        parts << QString::number(trace.events.deltaBytes(i)) + QLatin1Char('@')
                     + (layer == kNoLayer ? QStringLiteral("-") : qs(trace.layers[layer].path));
    }
    QStringList layers;
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        int ranges = 0;
        for (const Range &range : trace.ranges)
            ranges += range.layer == l;
        layers << qs(trace.layers[l].path)
                      + (trace.layers[l].kind.empty() ? QString()
                                                      : QLatin1Char('[') + qs(trace.layers[l].kind) + QLatin1Char(']'))
                      + QStringLiteral(" x") + QString::number(ranges);
    }
    layers.sort();
    return parts.join(QLatin1Char(' ')) + QStringLiteral(" | ") + layers.join(QLatin1Char(' '));
}

} // namespace

class tst_LayerEdits : public QObject
{
    Q_OBJECT

private slots:
    void edits_data()
    {
        QTest::addColumn<QString>("edit"); // "rename LAYER NAME" or "merge LAYER"
        QTest::addColumn<QString>("expected");
        QTest::addRow("rename a layer with a sub-layer")
            << QStringLiteral("rename net.b blocks")
            << QStringLiteral(
                   "100@net.a 50@net.blocks 10@net.blocks.c -100@- | net.a x1 net.blocks.c x1 net.blocks[Block] x1 net[Net] x1");
        QTest::addRow("merge a leaf into its parent")
            << QStringLiteral("merge net.b.c")
            << QStringLiteral("100@net.a 50@net.b 10@net.b -100@- | net.a x1 net.b[Block] x1 net[Net] x1");
        QTest::addRow("merge a layer with a sub-layer: the sub-layer moves up")
            << QStringLiteral("merge net.b")
            << QStringLiteral("100@net.a 50@net 10@net.c -100@- | net.a x1 net.c x1 net[Net] x1");
    }

    void edits()
    {
        QFETCH(QString, edit);
        QFETCH(QString, expected);
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const QStringList words = edit.split(QLatin1Char(' '));
        const std::uint32_t layer = *trace->findLayer(ss(words[1]));
        const Trace edited =
            words[0] == QLatin1String("rename") ? renameLayer(*trace, layer, ss(words[2])) : mergeIntoParent(*trace, layer);
        QCOMPARE(describe(edited), expected);
        // The memory stays where it was: the same activation bytes in all.
        const auto before = computeLayerStats(*trace), after = computeLayerStats(edited);
        QCOMPARE(after[*edited.findLayer("net")].activationBytes, before[*trace->findLayer("net")].activationBytes);
    }

    void badEdits_data()
    {
        QTest::addColumn<QString>("edit");
        QTest::addColumn<QString>("problem");
        QTest::addRow("a name with a dot") << QStringLiteral("rename net.b a.b") << QStringLiteral("hold a '.'");
        QTest::addRow("an empty name") << QStringLiteral("rename net.b") << QStringLiteral("cannot be empty");
        QTest::addRow("a sibling's name") << QStringLiteral("rename net.b a") << QStringLiteral("is there already");
        QTest::addRow("a top-level layer") << QStringLiteral("merge net") << QStringLiteral("nothing to merge it into");
    }

    void badEdits()
    {
        QFETCH(QString, edit);
        QFETCH(QString, problem);
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const QStringList words = edit.split(QLatin1Char(' '));
        const std::uint32_t layer = *trace->findLayer(ss(words[1]));
        try {
            if (words[0] == QLatin1String("rename"))
                renameLayer(*trace, layer, ss(words.value(2)));
            else
                mergeIntoParent(*trace, layer);
            QFAIL("the edit was accepted");
        } catch (const Error &error) {
            QVERIFY2(qs(error.what()).contains(problem), error.what());
        }
    }
};

QTEST_GUILESS_MAIN(tst_LayerEdits)
#include "tst_layeredits.moc"
