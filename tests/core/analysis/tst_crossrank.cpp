// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/crossrank.h"
#include "core/analysis/timelineseries.h"
#include "core/import/traceloader.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::traceFrom;

namespace {

// A rank's trace: two steps of `first` and `second` ns; in the first, `small` bytes in
// blocks.0 and `large` in blocks.1 live at the peak.
QString rankText(const QString &rank, int small, int large, int first, int second)
{
    QString text = rank.isEmpty() ? QString() : QStringLiteral("meta rank %1\nmeta world_size 3\n").arg(rank);
    return text
           + QStringLiteral(
                 "t=0 begin step 1\nt=1 alloc a %1 activation @fwd:blocks.0\nt=2 alloc b %2 activation @fwd:blocks.1\n"
                 "t=3 free a @bwd:blocks.0\nt=4 free b @bwd:blocks.1\nt=%3 end step 1\nt=%3 begin step 2\nt=%4 end step 2\n")
                 .arg(small)
                 .arg(large)
                 .arg(first)
                 .arg(first + second);
}

// "rank file peak step layer=bytes [reason]" per row.
QString printTable(const CrossRankTable &table)
{
    QStringList rows;
    for (const RankRow &row : table.rows) {
        const RankOverview &o = row.overview;
        QString line = QStringLiteral("%1 %2 %3 %4 %5=%6")
                           .arg(row.rank)
                           .arg(qs(o.file))
                           .arg(o.figures.peakBytes)
                           .arg(o.figures.stepTimeNs ? QString::number(*o.figures.stepTimeNs) : QStringLiteral("-"))
                           .arg(qs(o.topLayer))
                           .arg(o.topLayerBytes);
        if (row.outlier)
            line += QStringLiteral(" [") + qs(row.reason) + QLatin1Char(']');
        rows << line;
    }
    return rows.join(QLatin1Char('\n'));
}

RankOverview figuresOnly(std::int64_t peak, std::optional<std::int64_t> stepNs)
{
    RankOverview overview;
    overview.figures.peakBytes = peak;
    overview.figures.stepTimeNs = stepNs;
    return overview;
}

} // namespace

class tst_CrossRank : public QObject
{
    Q_OBJECT

private slots:
    // Given out of order, one rank holding far more: peaks 1000, 1020 and 2000 B have the
    // median 1020 and deviations 20, 0 and 980, so MAD = 20 and the limit max(60, 51) = 60.
    // Step times 102, 100 and 100 ns (medians of 100/104, 100/100, 90/110) stay within 5 %.
    void threeRanksOneOutlier()
    {
        std::vector<RankOverview> ranks;
        ranks.push_back(overviewRank("r2.pltxt", *traceFrom(rankText(QStringLiteral("2"), 1500, 500, 90, 110)), 0));
        ranks.push_back(overviewRank("r0.pltxt", *traceFrom(rankText(QStringLiteral("0"), 400, 600, 100, 104)), 0));
        ranks.push_back(overviewRank("r1.pltxt", *traceFrom(rankText(QStringLiteral("1"), 20, 1000, 100, 100)), 0));
        QCOMPARE(ranks.front().worldSize, std::optional<std::int64_t>(3));
        QCOMPARE(ranks.front().figures.peakStep, std::optional<std::int64_t>(1));
        const CrossRankTable table = crossRankTable(std::move(ranks));
        QCOMPARE(printTable(table), QStringLiteral("0 r0.pltxt 1000 102 blocks.1=600\n"
                                                   "1 r1.pltxt 1020 100 blocks.1=1000\n"
                                                   "2 r2.pltxt 2000 100 blocks.0=1500 "
                                                   "[peak 1.953 KiB is 96.1 % above the ranks' median of 1020 B]"));
        QCOMPARE(table.medianPeakBytes, std::int64_t(1020));
        QCOMPARE(table.medianStepTimeNs, std::optional<std::int64_t>(100));
    }

    void noOutlierWhenAllEqual()
    {
        std::vector<RankOverview> ranks;
        for (const char *rank : {"1", "0", "3", "2"})
            ranks.push_back(overviewRank(rank, *traceFrom(rankText(QString::fromLatin1(rank), 100, 200, 50, 50)), 0));
        const CrossRankTable table = crossRankTable(std::move(ranks));
        QCOMPARE(table.rows.size(), std::size_t(4));
        for (std::size_t i = 0; i < table.rows.size(); ++i) {
            QCOMPARE(table.rows[i].rank, std::int64_t(i));
            QVERIFY2(!table.rows[i].outlier, table.rows[i].reason.c_str());
            QCOMPARE(table.rows[i].overview.figures.peakBytes, std::int64_t(300));
        }
    }

    // Without rank metadata a file's rank is its position in the list; metadata that is not
    // a number counts as none.
    void positionWithoutRankMetadata()
    {
        std::vector<RankOverview> ranks;
        ranks.push_back(overviewRank("a", *traceFrom(rankText(QString(), 1, 2, 10, 10)), 0));
        ranks.push_back(overviewRank("b", *traceFrom(QStringLiteral("meta rank two\n") + rankText(QString(), 1, 2, 10, 10)), 0));
        ranks.push_back(overviewRank("c", *traceFrom(QStringLiteral("alloc x 3\n")), 0));
        QVERIFY(!ranks[1].rank);
        const CrossRankTable table = crossRankTable(std::move(ranks));
        QCOMPARE(printTable(table), QStringLiteral("0 a 3 10 blocks.1=2\n1 b 3 10 blocks.1=2\n2 c 3 - =0"));
    }

    // The rule of the header on peaks alone: |x - m| > max(3 × MAD, 5 % of m).
    void outlierRule_data()
    {
        QTest::addColumn<QList<qint64>>("peaks");
        QTest::addColumn<QString>("flagged");
        QTest::addRow("all equal") << QList<qint64>{100, 100, 100} << QString();
        QTest::addRow("two ranks far apart") << QList<qint64>{100, 300} << QString();
        QTest::addRow("one 6 %% above the rest") << QList<qint64>{100, 100, 106} << QStringLiteral("2");
        QTest::addRow("one 5 %% above the rest") << QList<qint64>{100, 100, 105} << QString();
        QTest::addRow("one far below") << QList<qint64>{100, 50, 100, 100} << QStringLiteral("1");
        // Median 120, deviations 20 10 0 10 80: MAD 10, limit 30.
        QTest::addRow("a spread that the MAD allows") << QList<qint64>{100, 110, 120, 130, 200} << QStringLiteral("4");
        QTest::addRow("a single rank") << QList<qint64>{100} << QString();
        QTest::addRow("zero median") << QList<qint64>{0, 0, 1} << QStringLiteral("2");
    }
    void outlierRule()
    {
        QFETCH(QList<qint64>, peaks);
        QFETCH(QString, flagged);
        std::vector<RankOverview> ranks;
        for (qint64 peak : peaks)
            ranks.push_back(figuresOnly(peak, std::nullopt));
        const CrossRankTable table = crossRankTable(std::move(ranks));
        QStringList found;
        for (const RankRow &row : table.rows) {
            if (row.outlier)
                found << QString::number(row.rank);
        }
        QCOMPARE(found.join(QLatin1Char(' ')), flagged);
        QVERIFY(!table.medianStepTimeNs);
    }

    // Step times are judged over the ranks with steps only, and both reasons are given.
    void stepTimeOutliers()
    {
        std::vector<RankOverview> ranks = {figuresOnly(100, 1000), figuresOnly(100, std::nullopt), figuresOnly(100, 1000),
                                           figuresOnly(300, 2000), figuresOnly(100, 1040)};
        const CrossRankTable table = crossRankTable(std::move(ranks));
        QCOMPARE(table.medianStepTimeNs, std::optional<std::int64_t>(1020));
        QCOMPARE(table.medianPeakBytes, std::int64_t(100));
        QCOMPARE(table.rows[3].reason, std::string("peak 300 B is 200.0 % above the ranks' median of 100 B; "
                                                   "step time 2.000 us is 96.1 % above the ranks' median of 1.020 us"));
        for (std::size_t i : {0, 1, 2, 4})
            QVERIFY2(!table.rows[i].outlier, table.rows[i].reason.c_str());
    }

    // The small timeline: lowest and highest allocated bytes per column over the trace's span.
    void envelopeKeepsThePeak()
    {
        const auto trace =
            traceFrom(QStringLiteral("t=0 alloc a 100\nt=10 alloc b 50\nt=12 free b\nt=20 free a\nt=29 alloc c 7\n"));
        const RankOverview overview = overviewRank("x", *trace, 3);
        QCOMPARE(overview.firstNs, std::int64_t(0));
        QCOMPARE(overview.lastNs, std::int64_t(29));
        QCOMPARE(overview.events, std::size_t(5));
        QStringList columns;
        for (const ColumnRange &column : overview.envelope)
            columns << QStringLiteral("%1:%2-%3").arg(column.beginNs).arg(column.minBytes).arg(column.maxBytes);
        QCOMPARE(columns.join(QLatin1Char(' ')), QStringLiteral("0:100-100 10:100-150 20:0-7"));
        QVERIFY(overviewRank("x", *trace, 0).envelope.empty());
    }

    // The overview from a full summary is the same as the one that finds the peak alone.
    void sameFromASummary()
    {
        const auto trace = traceFrom(rankText(QStringLiteral("5"), 100, 300, 20, 30));
        const RankOverview alone = overviewRank("f", *trace, 4);
        const RankOverview fromSummary = overviewRank("f", *trace, summarize(*trace), 4);
        QCOMPARE(fromSummary.rank, alone.rank);
        QCOMPARE(fromSummary.figures.peakBytes, alone.figures.peakBytes);
        QCOMPARE(fromSummary.figures.peakStep, alone.figures.peakStep);
        QCOMPARE(fromSummary.figures.stepTimeNs, std::optional<std::int64_t>(25));
        QCOMPARE(fromSummary.topLayer, alone.topLayer);
        QCOMPARE(fromSummary.envelope.size(), alone.envelope.size());
        for (std::size_t i = 0; i < alone.envelope.size(); ++i)
            QCOMPARE(fromSummary.envelope[i].maxBytes, alone.envelope[i].maxBytes);
    }

    // The envelope reduced from a timeline's allocated series (what the app has) is the one
    // reduced from the events, on real recordings.
    void envelopeFromTheTimelineIsTheSame_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *file : {"kineto_h200_gpt_train.pt.trace.json.gz", "snapshot_cs336_medium_train.pickle.gz",
                                 "memory_timeline_hta.raw.json.gz", "snapshot_h200_pools_streams_graph.pickle.gz"})
            QTest::addRow("%s", file) << QString::fromLatin1(file);
    }
    void envelopeFromTheTimelineIsTheSame()
    {
        QFETCH(QString, file);
        const auto trace = loadTrace(test::ss(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + file));
        const TraceSummary summary = summarize(*trace);
        QVERIFY(summary.peak.primary);
        const TimelineSeries timeline =
            buildTimeline(*trace, summary.peak.devices[*summary.peak.primary].device, GroupBy::Category);
        const RankOverview fromEvents = overviewRank("f", *trace, summary, 300);
        const RankOverview fromTimeline = overviewRank("f", *trace, summary, 300, timeline.allocated.span());
        QCOMPARE(fromTimeline.envelope.size(), std::size_t(300));
        QCOMPARE(fromTimeline.envelope.size(), fromEvents.envelope.size());
        for (std::size_t i = 0; i < fromEvents.envelope.size(); ++i) {
            const ColumnRange &a = fromEvents.envelope[i], &b = fromTimeline.envelope[i];
            QVERIFY2(a.beginNs == b.beginNs && a.minBytes == b.minBytes && a.maxBytes == b.maxBytes && a.maxTimeNs == b.maxTimeNs,
                     qPrintable(QStringLiteral("column %1").arg(i)));
        }
    }
};

QTEST_GUILESS_MAIN(tst_CrossRank)
#include "tst_crossrank.moc"
