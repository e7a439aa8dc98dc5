// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/blockgroups.h"
#include "core/analysis/tracediff.h"
#include "core/error.h"
#include "core/import/traceloader.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::traceFrom;

namespace {

// Live at the end: two blocks of the user's model.py, one PyTorch's functional.py made for
// the user's train.py (its allocation site's file, as the site is the user's own code), one
// an operator alone made, one without a stack.
constexpr const char *kBlocks =
    "alloc a 100 activation stack=train@/home/me/train.py:20;forward@/home/me/model.py:10\n"
    "alloc b 300 activation stack=train@/home/me/train.py:20;forward@/home/me/model.py:12\n"
    "alloc c 50 activation "
    "stack=train@/home/me/train.py:20;softmax@/usr/lib/python3/site-packages/torch/nn/functional.py:2140\n"
    "alloc d 20 temporary stack=aten::mm@:0\n"
    "alloc e 7 parameter\n";

// Live at the end: blocks allocated in stages (nested: attn inside step), on two streams and
// in two pools, one with the compile context and one with the user metadata a snapshot entry
// records (innermost frames, as the snapshot reader keeps them).
constexpr const char *kStaged = "begin other stage=data\n"
                                "alloc a 100 activation stack=train@/t.py:1;0/0@(compile%20context):0\n"
                                "end other stage=data\n"
                                "begin other stage=step\n"
                                "begin other stage=attn\n"
                                "alloc b 300 activation stream=7 stack=train@/t.py:2;tag1@(user%20metadata):0\n"
                                "end other stage=attn\n"
                                "alloc c 50 activation pool=1,0\n"
                                "end other stage=step\n"
                                "alloc d 20 temporary pool=1,0 stream=7\n";

QString rowsText(const std::vector<GroupRow> &rows)
{
    QStringList out;
    for (const GroupRow &row : rows)
        out << QStringLiteral("%1 %2/%3").arg(qs(row.key)).arg(row.bytes).arg(row.blocks);
    return out.join(QStringLiteral(", "));
}

std::vector<GroupRow> groupsAtPeak(const Trace &trace, const BlockGrouping &grouping)
{
    const TraceSummary summary = summarize(trace);
    return groupBlocks(trace, AllocationSites(trace.stacks), *summary.peak.liveAtPeak, grouping);
}

} // namespace

class tst_BlockGroups : public QObject
{
    Q_OBJECT

private slots:
    void blocksAreGroupedByWhatTheirStacksSay_data()
    {
        QTest::addColumn<QString>("grouping");
        QTest::addColumn<QString>("rows");
        QTest::addRow("by source file") << QStringLiteral(
            "file") << QStringLiteral("/home/me/model.py 400/2, /home/me/train.py 50/1, (no source file) 27/2");
        QTest::addRow("by the innermost frame a pattern matches")
            << QStringLiteral("regex:model\\.py:1[02]")
            << QStringLiteral("model.py:12 300/1, model.py:10 100/1, (no frame matches) 77/3");
        QTest::addRow("by a capture group") << QStringLiteral("regex:/(\\w+)\\.py")
                                            << QStringLiteral("model 400/2, functional 50/1, (no frame matches) 27/2");
        QTest::addRow("an outer frame matches when an inner one does not")
            << QStringLiteral("regex:(train)\\.py") << QStringLiteral("train 450/3, (no frame matches) 27/2");
        QTest::addRow("an operator's frame")
            << QStringLiteral("regex:aten::(\\w+)") << QStringLiteral("(no frame matches) 457/4, mm 20/1");
    }
    void blocksAreGroupedByWhatTheirStacksSay()
    {
        QFETCH(QString, grouping);
        QFETCH(QString, rows);
        const auto trace = traceFrom(QString::fromLatin1(kBlocks));
        const BlockGrouping parsed = parseBlockGrouping(grouping.toStdString());
        QCOMPARE(qs(parsed.text()), grouping);
        QCOMPARE(rowsText(groupsAtPeak(*trace, parsed)), rows);
    }

    void blocksAreGroupedByStagePoolStreamAndContext_data()
    {
        QTest::addColumn<QString>("grouping");
        QTest::addColumn<QString>("rows");
        QTest::addRow("by the innermost stage open at the allocation")
            << QStringLiteral("stage") << QStringLiteral("attn 300/1, data 100/1, step 50/1, (no stage) 20/1");
        QTest::addRow("by memory pool") << QStringLiteral("pool") << QStringLiteral("default pool 400/2, graph pool 1 70/2");
        QTest::addRow("by stream") << QStringLiteral("stream") << QStringLiteral("stream 7 320/2, stream 0 150/2");
        QTest::addRow("by compile context") << QStringLiteral("compile-context")
                                            << QStringLiteral("(no compile context) 370/3, 0/0 100/1");
        QTest::addRow("by user metadata") << QStringLiteral("user-metadata")
                                          << QStringLiteral("tag1 300/1, (no user metadata) 170/3");
    }
    void blocksAreGroupedByStagePoolStreamAndContext()
    {
        QFETCH(QString, grouping);
        QFETCH(QString, rows);
        const auto trace = traceFrom(QString::fromLatin1(kStaged));
        const BlockGrouping parsed = parseBlockGrouping(grouping.toStdString());
        QCOMPARE(qs(parsed.text()), grouping);
        QCOMPARE(rowsText(groupsAtPeak(*trace, parsed)), rows);
    }

    // A snapshot's compile_context and user_metadata reach the stack of the block its entry
    // allocated (PyTorch's "N/A", recorded without them, and "" are none); its annotations
    // PeakLens does not know are stages.
    void snapshotEntriesKeepTheirContextAndAnnotations_data()
    {
        QTest::addColumn<QString>("grouping");
        QTest::addColumn<QString>("rows");
        QTest::addRow("compile context") << QStringLiteral("compile-context")
                                         << QStringLiteral("0/0 4194304/1, 1/0 3145728/1, (no compile context) 1048576/1");
        QTest::addRow("user metadata") << QStringLiteral(
            "user-metadata") << QStringLiteral("phase=fwd 4194304/1, phase=bwd 3145728/1, (no user metadata) 1048576/1");
        QTest::addRow("stage") << QStringLiteral(
            "stage") << QStringLiteral("compiled_forward 4194304/1, compiled_backward 3145728/1, data_loading 1048576/1");
        // The context frames name no allocation site: the user's frame still does.
        QTest::addRow("file") << QStringLiteral("file") << QStringLiteral("train.py 8388608/3");
    }
    void snapshotEntriesKeepTheirContextAndAnnotations()
    {
        QFETCH(QString, grouping);
        QFETCH(QString, rows);
        const auto trace = loadTrace(PEAKLENS_SOURCE_DIR "/tests/data/snapshot_compile_context_p4.pickle");
        QCOMPARE(rowsText(groupsAtPeak(*trace, parseBlockGrouping(grouping.toStdString()))), rows);
    }

    void badGroupingsAreRefused_data()
    {
        QTest::addColumn<QString>("grouping");
        QTest::addColumn<QString>("message");
        QTest::addRow("unknown") << QStringLiteral(
            "phase") << QStringLiteral("give file, regex:PATTERN, compile-context, user-metadata, stage, pool or stream");
        QTest::addRow("no pattern") << QStringLiteral("regex:") << QStringLiteral("needs a pattern");
        QTest::addRow("not a pattern") << QStringLiteral("regex:(model") << QStringLiteral("not a regular expression");
        QTest::addRow("a pattern too long") << QStringLiteral("regex:") + QString(513, QLatin1Char('a'))
                                            << QStringLiteral("at most 512");
    }
    void badGroupingsAreRefused()
    {
        QFETCH(QString, grouping);
        QFETCH(QString, message);
        try {
            (void)parseBlockGrouping(grouping.toStdString());
            QFAIL("accepted");
        } catch (const Error &error) {
            QVERIFY2(qs(error.what()).contains(message), error.what());
        }
    }

    // A frame far longer than any real one is matched on its first bytes, so that a pattern
    // whose matching recurses per character cannot run out of stack on it.
    void aHugeFrameIsMatchedOnItsFirstBytes()
    {
        const QString name = QString(1 << 20, QLatin1Char('a'));
        const auto trace = traceFrom(QStringLiteral("alloc a 100 activation stack=%1@/home/me/model.py:10\n").arg(name));
        const auto rows = groupsAtPeak(*trace, parseBlockGrouping("regex:^((a|b)*)"));
        QCOMPARE(rows.size(), std::size_t(1));
        QCOMPARE(rows.front().key.size(), kMaxMatchedFrameBytes);
    }

    // A diff by a grouping lists what is new in B, gone from A, and what grew or shrank.
    void aDiffComparesGroupsBothWays()
    {
        const auto a = traceFrom(QString::fromLatin1(kBlocks));
        const auto b = traceFrom(QStringLiteral("alloc a 100 activation stack=forward@/home/me/model.py:10\n"
                                                "alloc b 900 activation stack=forward@/home/me/model.py:12\n"
                                                "alloc f 64 activation stack=forward@/home/me/attention.py:3\n"
                                                "alloc e 7 parameter\n"));
        const TraceDiff diff = diffTraces(*a, summarize(*a), *b, summarize(*b), parseBlockGrouping("file"));
        QStringList rows;
        for (const DiffRow &row : diff.byGroup)
            rows << QStringLiteral("%1 %2>%3").arg(qs(row.key)).arg(row.bytesA).arg(row.bytesB);
        QCOMPARE(rows, (QStringList{QStringLiteral("/home/me/model.py 400>1000"), QStringLiteral("/home/me/attention.py 0>64"),
                                    QStringLiteral("/home/me/train.py 50>0"), QStringLiteral("(no source file) 27>7")}));
        QVERIFY(diffTraces(*a, summarize(*a), *a, summarize(*a), parseBlockGrouping("file")).byGroup.empty());
    }
};

QTEST_GUILESS_MAIN(tst_BlockGroups)
#include "tst_blockgroups.moc"
