// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/peakfinder.h"
#include "core/analysis/stagestats.h"
#include "core/import/traceloader.h"

#include <QRandomGenerator>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::traceFrom;

namespace {

QString statsText(const std::vector<StageStats> &stats)
{
    QStringList out;
    for (const StageStats &s : stats)
        out << QStringLiteral("%1 %2x %3ns %4%5")
                   .arg(qs(s.name))
                   .arg(s.spans)
                   .arg(s.totalNs)
                   .arg(s.highestBytes)
                   .arg(s.holdsPeak ? QStringLiteral(" open") : QString());
    return out.join(QStringLiteral(", "));
}

} // namespace

class tst_StageStats : public QObject
{
    Q_OBJECT

private slots:
    // Per stage name: its spans, their time, the most allocated within any of them (what was
    // held as one began counts), and whether one is open at the peak.
    void stagesByTheMostAllocatedInThem()
    {
        const auto trace = traceFrom(QStringLiteral("t=0 alloc a 100\n"
                                                    "t=10 begin other stage=load\n"
                                                    "t=20 alloc b 50\n"
                                                    "t=30 free b\n"
                                                    "t=40 end other stage=load\n"
                                                    "t=50 begin other stage=step\n"
                                                    "t=60 alloc c 300\n"
                                                    "t=70 end other stage=step\n"
                                                    "t=80 free c\n"
                                                    "t=90 begin other stage=load\n"
                                                    "t=95 end other stage=load\n"));
        const PeakReport peaks = findPeaks(*trace);
        const DevicePeak &peak = peaks.devices[*peaks.primary];
        QCOMPARE(statsText(stageStats(*trace, peak.device, peak.timeNs)),
                 QStringLiteral("step 1x 20ns 400 open, load 2x 35ns 150"));
        // No memory events on another device: every stage there held nothing.
        QCOMPARE(statsText(stageStats(*trace, *Device::parse("cuda:1"), std::nullopt)),
                 QStringLiteral("load 2x 35ns 0, step 1x 20ns 0"));
    }

    // Real recordings: each stage's spans and time are the file's own annotations (Python:
    // a Kineto trace's "user_annotation" events, a snapshot's external_annotations paired
    // START to END), ProfilerStep ones being steps.
    void realRecordingsStagesAreTheirAnnotations_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("stages"); // "NAME SPANS MICROSECONDS", by name
        QTest::addRow("a V100 rank's Kineto trace") << QStringLiteral("kineto_v100_rank1.pt.trace.json.gz")
                                                    << QStringList{QStringLiteral("Optimizer.step#SGD.step 5 62473"),
                                                                   QStringLiteral("Optimizer.zero_grad#SGD.zero_grad 5 57638"),
                                                                   QStringLiteral("nccl:all_reduce 2020 121318")};
        QTest::addRow("an H200 snapshot") << QStringLiteral("snapshot_h200_pools_streams_graph.pickle.gz")
                                          << QStringList{QStringLiteral("Optimizer.step#AdamW.step 2 47776"),
                                                         QStringLiteral("Optimizer.zero_grad#AdamW.zero_grad 2 115")};
    }
    void realRecordingsStagesAreTheirAnnotations()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, stages);
        const auto trace = loadTrace(test::ss(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + file));
        const PeakReport peaks = findPeaks(*trace);
        QStringList got;
        for (const StageStats &stage : stageStats(*trace, peaks.devices[*peaks.primary].device, std::nullopt))
            got << QStringLiteral("%1 %2 %3").arg(qs(stage.name)).arg(stage.spans).arg(stage.totalNs / 1000);
        got.sort();
        QCOMPARE(got, stages);
    }

    // The highest within a span, read a block of events at a time, is the highest of its
    // events one by one, for spans of every length and place.
    void theHighestIsEveryEventsHighest()
    {
        QRandomGenerator random(7);
        QString text;
        std::vector<std::int64_t> totals;
        std::int64_t total = 0;
        for (int i = 0; i < 3000; ++i) {
            const int bytes = 1 + int(random.bounded(1000));
            text += QStringLiteral("t=%1 alloc b%2 %3\n").arg(10 * i).arg(i).arg(bytes);
            total += bytes;
            totals.push_back(total);
        }
        std::vector<std::pair<int, int>> spans;
        for (int s = 0; s < 40; ++s) {
            const int begin = int(random.bounded(3000)), length = int(random.bounded(1200));
            spans.emplace_back(begin, std::min(begin + length, 2999));
        }
        std::sort(spans.begin(), spans.end());
        // Stage lines interleaved by time with the allocations: one trace text in time order.
        QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        for (std::size_t s = 0; s < spans.size(); ++s) {
            lines << QStringLiteral("t=%1 begin other stage=s%2").arg(10 * spans[s].first + 5).arg(s);
            lines << QStringLiteral("t=%1 end other stage=s%2").arg(10 * spans[s].second + 5).arg(s);
        }
        std::stable_sort(lines.begin(), lines.end(), [](const QString &a, const QString &b) {
            return a.section(QLatin1Char(' '), 0, 0).mid(2).toLongLong() < b.section(QLatin1Char(' '), 0, 0).mid(2).toLongLong();
        });
        const auto trace = traceFrom(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
        const std::vector<StageStats> stats = stageStats(*trace, Device{}, std::nullopt);
        QCOMPARE(stats.size(), spans.size());
        for (const StageStats &stage : stats) {
            const auto &[first, last] = spans[std::stoul(stage.name.substr(1))];
            // Held as it began (after event `first`), and after each event up to `last`.
            const std::int64_t highest = *std::max_element(totals.begin() + first, totals.begin() + last + 1);
            QCOMPARE(stage.highestBytes, highest);
        }
    }
};

QTEST_GUILESS_MAIN(tst_StageStats)
#include "tst_stagestats.moc"
