// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/layerranking.h"
#include "core/analysis/layerstats.h"
#include "testsupport.h"

using namespace peaklens;
using peaklens::test::traceFrom;

class tst_LayerStats : public QObject
{
    Q_OBJECT

private slots:
    void activationsLeftForBackward_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("layer");
        QTest::addColumn<qint64>("activation");
        QTest::addColumn<qint64>("self");

        const QString twoBlocks = QStringLiteral(
            "begin step 1\n"
            "begin fwd:net\n"
            "begin fwd:net.b0\nalloc s0 300 activation\nalloc t0 1000 temporary\nfree t0\nend fwd:net.b0\n"
            "begin fwd:net.b1\nalloc s1 200 activation\nend fwd:net.b1\n"
            "alloc out 10 activation\n"
            "end fwd:net\n"
            "begin bwd:net.b1\nfree s1\nend bwd:net.b1\nbegin bwd:net.b0\nfree s0\nend bwd:net.b0\nfree out @bwd:net\n"
            "end step 1\n");
        QTest::addRow("temporaries freed in forward do not count")
            << twoBlocks << QStringLiteral("net.b0") << qint64(300) << qint64(300);
        QTest::addRow("second block") << twoBlocks << QStringLiteral("net.b1") << qint64(200) << qint64(200);
        QTest::addRow("a parent includes its children") << twoBlocks << QStringLiteral("net") << qint64(510) << qint64(10);
        QTest::addRow("the largest step counts")
            << QStringLiteral("begin step 1\nbegin fwd:l\nalloc a 100\nend fwd:l\nbegin bwd:l\nfree a\nend bwd:l\nend step 1\n"
                              "begin step 2\nbegin fwd:l\nalloc b 400\nend fwd:l\nbegin bwd:l\nfree b\nend bwd:l\nend step 2\n")
            << QStringLiteral("l") << qint64(400) << qint64(400);
        QTest::addRow("an earlier step's leftovers are not this step's activations")
            << QStringLiteral("begin step 1\nbegin fwd:l\nalloc leak 5\nend fwd:l\nbegin bwd:l\nend bwd:l\nend step 1\n"
                              "begin step 2\nbegin fwd:l\nalloc b 10\nend fwd:l\nbegin bwd:l\nfree b\nend bwd:l\nend step 2\n")
            << QStringLiteral("l") << qint64(10) << qint64(10);
        // cuBLAS makes its workspace through PyTorch's allocator at the first matmul and keeps it.
        QTest::addRow("a workspace made at the first call and kept is no activation") << QStringLiteral(
            "begin step 1\nbegin fwd:l\nalloc ws 1000\nalloc a 100\nend fwd:l\nbegin bwd:l\nfree a\nend bwd:l\nend step 1\n"
            "begin step 2\nbegin fwd:l\nalloc b 100\nend fwd:l\nbegin bwd:l\nfree b\nend bwd:l\nend step 2\n")
                                                                                      << QStringLiteral("l") << qint64(100)
                                                                                      << qint64(100);
        QTest::addRow("kept past the only step, to the end of the trace") << QStringLiteral(
            "begin step 1\nbegin fwd:l\nalloc ws 1000\nalloc a 100\nend fwd:l\nbegin bwd:l\nfree a\nend bwd:l\nend step 1\n")
                                                                          << QStringLiteral("l") << qint64(100) << qint64(100);
        QTest::addRow("without steps, what is live at the backward counts")
            << QStringLiteral("begin fwd:l\nalloc a 100\nend fwd:l\nbegin bwd:l\nend bwd:l\n") << QStringLiteral("l")
            << qint64(100) << qint64(100);
        QTest::addRow("no backward, no activations")
            << QStringLiteral("begin fwd:l\nalloc a 100\nend fwd:l\n") << QStringLiteral("l") << qint64(0) << qint64(0);
    }
    void activationsLeftForBackward()
    {
        QFETCH(QString, text);
        QFETCH(QString, layer);
        QFETCH(qint64, activation);
        QFETCH(qint64, self);
        const auto trace = traceFrom(text);
        const auto stats = computeLayerStats(*trace);
        const auto index = trace->findLayer(layer.toStdString());
        QVERIFY(index);
        QCOMPARE(stats[*index].activationBytes, activation);
        QCOMPARE(stats[*index].selfActivationBytes, self);
    }

    void timesAreMeansPerStep_data()
    {
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("second");
        QTest::addRow("steps numbered in time order") << 1 << 2;
        QTest::addRow("steps numbered backwards") << 7 << 3;
        QTest::addRow("one step number twice") << 5 << 5;
    }
    void timesAreMeansPerStep()
    {
        QFETCH(int, first);
        QFETCH(int, second);
        const QString text = QStringLiteral(
            "begin step %1\nt=0 begin fwd:l\nt=10 end fwd:l\nt=20 begin fwd:l\nt=30 end fwd:l\n"
            "t=40 begin bwd:l\nt=100 end bwd:l\nt=101 end step %1\n"
            "t=200 begin step %2\nt=200 begin fwd:l\nt=240 end fwd:l\nt=250 begin bwd:l\nt=270 end bwd:l\nt=300 end step %2\n");
        const auto trace = traceFrom(text.arg(first).arg(second));
        if (first == second) { // one step: the sums are its times
            const LayerStats s = computeLayerStats(*trace).at(0);
            QCOMPARE(s.forwardNs, qint64(60));
            QCOMPARE(s.backwardNs, qint64(80));
            return;
        }
        const LayerStats s = computeLayerStats(*trace).at(0);
        QCOMPARE(s.forwardNs, qint64(30));  // (10 + 10 + 40) / 2 steps
        QCOMPARE(s.backwardNs, qint64(40)); // (60 + 20) / 2
        QCOMPARE(s.forwardCalls, qint64(3));
        QCOMPARE(s.backwardCalls, qint64(2));
    }

    // The layer table lists equal layers as a person counts: a loop's calls 2 before 10.
    void naturalOrder_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("less");
        QTest::addRow("a loop's calls") << QStringLiteral("model:253[2]") << QStringLiteral("model:253[10]") << true;
        QTest::addRow("and back") << QStringLiteral("model:253[10]") << QStringLiteral("model:253[2]") << false;
        QTest::addRow("lines as numbers") << QStringLiteral("train:9") << QStringLiteral("train:10") << true;
        QTest::addRow("module paths") << QStringLiteral("blocks.2.attn") << QStringLiteral("blocks.11") << true;
        QTest::addRow("text first") << QStringLiteral("attn") << QStringLiteral("mlp") << true;
        QTest::addRow("a prefix") << QStringLiteral("blocks") << QStringLiteral("blocks.0") << true;
        QTest::addRow("equal") << QStringLiteral("blocks.0") << QStringLiteral("blocks.0") << false;
        QTest::addRow("leading zeros") << QStringLiteral("x007") << QStringLiteral("x8") << true;
    }

    void naturalOrder()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(bool, less);
        QCOMPARE(naturalLess(a.toStdString(), b.toStdString()), less);
    }
};

QTEST_GUILESS_MAIN(tst_LayerStats)
#include "tst_layerstats.moc"
