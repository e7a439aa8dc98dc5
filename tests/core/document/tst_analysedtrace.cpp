// SPDX-License-Identifier: Apache-2.0
#include "core/document/analysedtrace.h"
#include "core/error.h"
#include "core/import/traceloader.h"
#include "testsupport.h"

#include <QTest>

using namespace peaklens;
using peaklens::test::qs;

namespace {

QString printPeaks(const PeakReport &peaks)
{
    QStringList parts;
    for (const DevicePeak &peak : peaks.devices)
        parts << qs(peak.device.toString()) + QStringLiteral(" %1 at %2").arg(peak.allocatedBytes).arg(peak.timeNs);
    if (peaks.liveAtPeak)
        parts << QStringLiteral("live %1 in %2 blocks").arg(peaks.liveAtPeak->bytes).arg(peaks.liveAtPeak->allocations.size());
    return parts.join(QStringLiteral(", "));
}

QString printModel(const std::optional<CostModel> &model, const std::string &problem)
{
    if (!model)
        return qs(problem);
    QStringList layers;
    for (const ChainLayer &layer : model->layers)
        layers << qs(layer.path) + QStringLiteral(" A=%1 d=%2").arg(layer.retainedBytes).arg(layer.savingBytes);
    return QStringLiteral("step %1, %2 ns, peak %3, %4 points: ")
               .arg(model->step.value_or(-1))
               .arg(model->stepTimeNs)
               .arg(model->measuredPeakBytes)
               .arg(model->curve.size())
           + layers.join(QStringLiteral("; "));
}

template<typename Points>
QString printPoints(const Points &points)
{
    QStringList parts;
    for (const SeriesPoint &point : points)
        parts << QStringLiteral("%1:%2").arg(point.timeNs).arg(point.bytes);
    return parts.join(QLatin1Char(' '));
}

} // namespace

class tst_AnalysedTrace : public QObject
{
    Q_OBJECT

private slots:
    // The analyses share one finding of the peaks; each must come out as it does alone.
    void sameAsEachAnalysisAlone_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addRow("a replayed training step")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
        QTest::addRow("a modelled step") << QFINDTESTDATA("../../data/modelled-step.pltxt");
        QTest::addRow("a real snapshot") << QFINDTESTDATA("../../data/real/snapshot_cs336_medium_train.pickle.gz");
        QTest::addRow("a real Kineto trace") << QFINDTESTDATA("../../data/real/kineto_h100_qwen_inference.pt.trace.json.gz");
    }
    void sameAsEachAnalysisAlone()
    {
        QFETCH(QString, file);
        const TracePtr trace = loadTrace(test::ss(file));
        const AnalysedTracePtr analysed = analyseTrace(test::ss(file), trace);

        const TraceSummary summary = summarize(*trace);
        QCOMPARE(printPeaks(analysed->summary.peak), printPeaks(summary.peak));
        QVERIFY(summary.peak.primary);
        const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
        QCOMPARE(analysed->device, peak.device);
        QCOMPARE(analysed->peakBytes, peak.allocatedBytes);
        QCOMPARE(analysed->summary.peakLayer, summary.peakLayer);
        QCOMPARE(analysed->summary.steps.size(), summary.steps.size());

        std::optional<CostModel> model;
        std::string problem;
        try {
            model = buildCostModel(*trace);
        } catch (const Error &error) {
            problem = error.what();
        }
        QCOMPARE(printModel(analysed->model, analysed->modelProblem), printModel(model, problem));

        const TimelineSeries timeline = buildTimeline(*trace, peak.device, GroupBy::Category);
        QCOMPARE(printPoints(analysed->byCategory.allocated), printPoints(timeline.allocated));
        QCOMPARE(analysed->byCategory.groups.size(), timeline.groups.size());
        for (std::size_t g = 0; g < timeline.groups.size(); ++g)
            QCOMPARE(printPoints(analysed->byCategory.groups[g].points), printPoints(timeline.groups[g].points));
    }
};

QTEST_GUILESS_MAIN(tst_AnalysedTrace)
#include "tst_analysedtrace.moc"
