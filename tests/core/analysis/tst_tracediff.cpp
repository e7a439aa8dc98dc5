// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/tracediff.h"
#include "core/import/traceloader.h"
#include "core/trace/layermatch.h"

#include <set>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::stepText;
using peaklens::test::traceFrom;

namespace {

// "key A>B blocks>blocks" per row, in the diff's order, e.g. "l0 100>300 1>1; l1 0>50 0>1".
QString printRows(const std::vector<DiffRow> &rows)
{
    QStringList parts;
    for (const DiffRow &row : rows)
        parts << QStringLiteral("%1 %2>%3 %4>%5")
                     .arg(qs(row.key))
                     .arg(row.bytesA)
                     .arg(row.bytesB)
                     .arg(row.blocksA)
                     .arg(row.blocksB);
    return parts.join(QStringLiteral("; "));
}

QString printPoints(const std::vector<SeriesPoint> &points)
{
    QStringList parts;
    for (const SeriesPoint &point : points)
        parts << QStringLiteral("%1:%2").arg(point.timeNs).arg(point.bytes);
    return parts.join(QLatin1Char(' '));
}

TraceDiff diffOf(const Trace &a, const Trace &b)
{
    return diffTraces(a, summarize(a), b, summarize(b));
}

const char *const kForward = "stack=main@train.py:10;forward@model.py:42";
const char *const kAttention = "stack=main@train.py:10;attend@attn.py:7";

} // namespace

class tst_TraceDiff : public QObject
{
    Q_OBJECT

private slots:
    // A trace against itself, read twice: nothing differs, whatever its size.
    void selfDiffIsEmpty_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addRow("a real training snapshot") << QFINDTESTDATA("../../data/real/snapshot_cs336_medium_train.pickle.gz");
        QTest::addRow("a protocol 4 snapshot") << QFINDTESTDATA("../../data/snapshot_p4.pickle");
        QTest::addRow("a real Kineto trace") << QFINDTESTDATA("../../data/real/kineto_h100_qwen_inference.pt.trace.json.gz");
        QTest::addRow("a modelled step, with steps") << QFINDTESTDATA("../../data/modelled-step.pltxt");
    }
    void selfDiffIsEmpty()
    {
        QFETCH(QString, file);
        const TracePtr a = loadTrace(test::ss(file));
        const TracePtr b = loadTrace(test::ss(file));
        const TraceDiff diff = diffOf(*a, *b);
        QVERIFY(diff.a.peakBytes > 0);
        QCOMPARE(printRows(diff.byLayer), QString());
        QCOMPARE(printRows(diff.bySite), QString());
        QCOMPARE(printRows(diff.byCategory), QString());
        QCOMPARE(diff.peakDeltaBytes(), std::int64_t(0));
        QCOMPARE(diff.a.reservedBytes, diff.b.reservedBytes);
        QCOMPARE(diff.a.stepTimeNs, diff.b.stepTimeNs);
        QCOMPARE(diff.a.liveBlocks, diff.b.liveBlocks);
        QVERIFY(diff.samePeaks());
        QCOMPARE(bool(diff.curves), !a->steps.empty() && diff.a.peakStep.has_value());
        if (diff.curves)
            QCOMPARE(printPoints(diff.curves->b), printPoints(diff.curves->a));
    }

    // Hand-made pairs where it is known which layer, site and category changed by how much.
    void changesAtThePeak_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<QString>("byLayer");
        QTest::addColumn<QString>("bySite");
        QTest::addColumn<QString>("byCategory");
        const QString forward = QString::fromLatin1(kForward), attention = QString::fromLatin1(kAttention);
        QTest::addRow("one layer's activation grew")
            << QStringLiteral("alloc w 1000 parameter\nalloc x 100 activation @fwd:l0 %1\nalloc y 40 activation @fwd:l1 %2\n")
                   .arg(forward, attention)
            << QStringLiteral("alloc w 1000 parameter\nalloc x 300 activation @fwd:l0 %1\nalloc y 40 activation @fwd:l1 %2\n")
                   .arg(forward, attention)
            << QStringLiteral("l0 100>300 1>1") << QStringLiteral("forward (model.py:42) 100>300 1>1")
            << QStringLiteral("activation 140>340 2>2");
        QTest::addRow("a new block in another layer, largest change first")
            << QStringLiteral("alloc x 100 activation @fwd:l0 %1\n").arg(forward)
            << QStringLiteral("alloc x 110 activation @fwd:l0 %1\nalloc y 500 temporary @fwd:l1 %2\n").arg(forward, attention)
            << QStringLiteral("l1 0>500 0>1; l0 100>110 1>1")
            << QStringLiteral("attend (attn.py:7) 0>500 0>1; forward (model.py:42) 100>110 1>1")
            << QStringLiteral("temporary 0>500 0>1; activation 100>110 1>1");
        QTest::addRow("a layer that shrank and one gone")
            << QStringLiteral("alloc x 300 activation @fwd:l0\nalloc y 50 gradient @bwd:l1\n")
            << QStringLiteral("alloc x 200 activation @fwd:l0\n") << QStringLiteral("l0 300>200 1>1; l1 50>0 1>0")
            << QStringLiteral("(no stack) 350>200 2>1") << QStringLiteral("activation 300>200 1>1; gradient 50>0 1>0");
        QTest::addRow("the same bytes in more blocks")
            << QStringLiteral("alloc x 200 activation @fwd:l0\n")
            << QStringLiteral("alloc x 100 activation @fwd:l0\nalloc y 100 activation @fwd:l0\n")
            << QStringLiteral("l0 200>200 1>2") << QStringLiteral("(no stack) 200>200 1>2")
            << QStringLiteral("activation 200>200 1>2");
        QTest::addRow("blocks outside any layer")
            << QStringLiteral("alloc x 64\n") << QStringLiteral("alloc x 96\n") << QStringLiteral("(no layer) 64>96 1>1")
            << QStringLiteral("(no stack) 64>96 1>1") << QStringLiteral("unknown 64>96 1>1");
        // The peaks are compared, not the ends: B's larger block is freed before its peak.
        QTest::addRow("only what is live at each peak")
            << QStringLiteral("alloc x 100 activation @fwd:l0\n")
            << QStringLiteral(
                   "alloc t 80 temporary @fwd:l1\nfree t\nalloc x 100 activation @fwd:l0\nalloc y 1 activation @fwd:l0\n")
            << QStringLiteral("l0 100>101 1>2") << QStringLiteral("(no stack) 100>101 1>2")
            << QStringLiteral("activation 100>101 1>2");
    }
    void changesAtThePeak()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(QString, byLayer);
        QFETCH(QString, bySite);
        QFETCH(QString, byCategory);
        const TraceDiff diff = diffOf(*traceFrom(a), *traceFrom(b));
        QCOMPARE(printRows(diff.byLayer), byLayer);
        QCOMPARE(printRows(diff.bySite), bySite);
        QCOMPARE(printRows(diff.byCategory), byCategory);
        QVERIFY(!diff.samePeaks());
        std::int64_t layerDelta = 0;
        for (const DiffRow &row : diff.byLayer)
            layerDelta += row.deltaBytes();
        QCOMPARE(layerDelta, diff.peakDeltaBytes());
    }

    // Layers are matched by module path and sites by their label, not by their indices in
    // each trace's tables.
    void indicesDifferNamesMatch_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<QString>("byLayer");
        QTest::addColumn<QString>("bySite");
        const QString forward = QString::fromLatin1(kForward), attention = QString::fromLatin1(kAttention);
        const QString a = QStringLiteral("layer enc.0\nlayer enc.1\nalloc x 100 activation @fwd:enc.0 %1\n"
                                         "alloc y 50 activation @fwd:enc.1 %2\n")
                              .arg(forward, attention);
        QTest::addRow("same memory") << a
                                     << QStringLiteral(
                                            "layer dec\nlayer enc.1\nlayer enc.0\nalloc s 8 stack=warmup@w.py:3\nfree s\n"
                                            "alloc y 50 activation @fwd:enc.1 %2\nalloc x 100 activation @fwd:enc.0 %1\n")
                                            .arg(forward, attention)
                                     << QString() << QString();
        QTest::addRow("one grew") << a
                                  << QStringLiteral("layer dec\nlayer enc.1\nlayer enc.0\nalloc s 8 stack=warmup@w.py:3\nfree s\n"
                                                    "alloc y 70 activation @fwd:enc.1 %2\nalloc x 100 activation @fwd:enc.0 %1\n")
                                         .arg(forward, attention)
                                  << QStringLiteral("enc.1 50>70 1>1") << QStringLiteral("attend (attn.py:7) 50>70 1>1");
    }
    void indicesDifferNamesMatch()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(QString, byLayer);
        QFETCH(QString, bySite);
        const auto traceA = traceFrom(a), traceB = traceFrom(b);
        QVERIFY(traceA->layers.front().path != traceB->layers.front().path);
        QVERIFY(traceA->stacks.frames().front() != traceB->stacks.frames().front());
        const TraceDiff diff = diffOf(*traceA, *traceB);
        QCOMPARE(printRows(diff.byLayer), byLayer);
        QCOMPARE(printRows(diff.bySite), bySite);
        QCOMPARE(printRows(diff.byCategory), byLayer.isEmpty() ? QString() : QStringLiteral("activation 150>170 2>2"));
    }

    void headlineFigures()
    {
        const auto a = traceFrom(QStringLiteral("t=0 begin step 1\nt=0 reserve s 4KiB\nt=10 alloc x 1KiB\nt=100 end step 1\n"
                                                "t=100 begin step 2\nt=150 free x\nt=400 end step 2\n"));
        const auto b =
            traceFrom(QStringLiteral("t=0 begin step 1\nt=0 reserve s 8KiB\nt=10 alloc x 3KiB\nt=50 end step 1\n"
                                     "t=50 begin step 2\nt=60 free x\nt=90 end step 2\nt=90 begin step 3\nt=900 end step 3\n"));
        const TraceDiff diff = diffOf(*a, *b);
        QCOMPARE(diff.a.peakBytes, std::int64_t(1024));
        QCOMPARE(diff.b.peakBytes, std::int64_t(3072));
        QCOMPARE(diff.peakDeltaBytes(), std::int64_t(2048));
        QCOMPARE(diff.a.reservedBytes, std::optional<std::int64_t>(4096));
        QCOMPARE(diff.b.reservedBytes, std::optional<std::int64_t>(8192));
        QCOMPARE(diff.a.stepTimeNs, std::optional<std::int64_t>(200)); // 100 and 300
        QCOMPARE(diff.b.stepTimeNs, std::optional<std::int64_t>(50));  // 50, 40 and 810
        QCOMPARE(diff.a.peakStep, std::optional<std::int64_t>(1));
        QCOMPARE(diff.a.liveBlocks, std::int64_t(1));

        const auto noSteps = traceFrom(QStringLiteral("alloc x 1KiB\n"));
        const TraceDiff withoutSteps = diffOf(*a, *noSteps);
        QVERIFY(!withoutSteps.b.stepTimeNs);
        QVERIFY(!withoutSteps.b.reservedBytes);
        QVERIFY(!withoutSteps.curves);
        QCOMPARE(printRows(withoutSteps.byLayer), QString());
        QVERIFY(withoutSteps.samePeaks() == false);
    }

    // B's step, twice as slow in its forward and holding twice the bytes, lies on A's clock
    // phase by phase: its allocation lands where A's did.
    void curvesOfThePeakStepLineUp()
    {
        const auto a = traceFrom(stepText(100, 40, 60, 100));
        const auto b = traceFrom(QStringLiteral("alloc p 10\n") + stepText(5000, 80, 60, 200));
        const TraceDiff diff = diffOf(*a, *b);
        QVERIFY(diff.curves);
        QCOMPARE(diff.curves->step, std::int64_t(1));
        QCOMPARE(printPoints(diff.curves->a), QStringLiteral("100:0 121:100 171:0 202:0"));
        QCOMPARE(printPoints(diff.curves->b), QStringLiteral("100:10 121:210 171:10 202:10"));
    }

    // Two recordings of one script whose lines moved between them: the layers named after
    // those lines still match, by their place in the model. Rows: a real snapshot and
    // the same with lines inserted above the calls (make_lines_moved.py), where every
    // layer must match and nothing differs; and a real pair recorded by one script in
    // fp32 and in bf16 autocast, one of whose calling lines moved from 107 to 108.
    void layersMatchAcrossMovedLines_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<double>("leastMatched"); // the share of A's layers that B has
        QTest::addColumn<bool>("same");           // nothing differs at the peaks
        QTest::addRow("lines inserted into a real snapshot's script")
            << QStringLiteral("snapshot_cs336_medium_train.pickle.gz")
            << QStringLiteral("snapshot_cs336_medium_train_lines_moved.pickle.gz") << 1.0 << true;
        QTest::addRow("a real fp32 and bf16 pair")
            << QStringLiteral("snapshot_cs336_pair_forward_fp32.pickle.gz")
            << QStringLiteral("snapshot_cs336_pair_forward_bf16.pickle.gz") << 0.8 << false;
    }

    void layersMatchAcrossMovedLines()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(double, leastMatched);
        QFETCH(bool, same);
        const auto traceA = loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/real/" + a.toStdString());
        const auto traceB = loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/real/" + b.toStdString());
        const std::vector<std::string> keysA = layerMatchKeys(*traceA), keysB = layerMatchKeys(*traceB);
        const std::set<std::string> inB(keysB.begin(), keysB.end());
        std::size_t matched = 0, samePath = 0;
        for (std::size_t l = 0; l < keysA.size(); ++l) {
            matched += inB.contains(keysA[l]);
            samePath += traceB->findLayer(traceA->layers[l].path).has_value();
        }
        QVERIFY(keysA.size() >= 20);
        const double share = double(matched) / double(keysA.size());
        qInfo("%zu of %zu layers match by place, %zu by name", matched, keysA.size(), samePath);
        QVERIFY2(share >= leastMatched, qPrintable(QStringLiteral("%1 of %2 layers match").arg(matched).arg(keysA.size())));
        QVERIFY2(samePath < keysA.size() / 2,
                 "the pair's layer names must differ: their lines moved"); // by name, most would not match
        QCOMPARE(diffOf(*traceA, *traceB).samePeaks(), same);
    }

    void noCurvesWithoutTheStepInB()
    {
        const auto a = traceFrom(stepText(100, 40, 60, 100));
        const auto b = traceFrom(QStringLiteral("t=0 begin step 7\nt=5 alloc a 100\nt=9 end step 7\n"));
        QVERIFY(!diffOf(*a, *b).curves);
        QVERIFY(diffOf(*b, *b).curves);
    }
};

QTEST_GUILESS_MAIN(tst_TraceDiff)
#include "tst_tracediff.moc"
