// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/format/outputfile.h"
#include "core/import/traceloader.h"
#include "core/plan/predictor.h"
#include "core/plan/steptimecomparison.h"
#include "core/report/htmlreport.h"
#include "core/report/reportdata.h"
#include "core/report/summaryjson.h"
#include "core/report/tablereport.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>

using namespace peaklens;
using test::qs;
using test::ss;

namespace {

const std::string kSample = PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens";
const std::string kModelled = PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt";

ReportData reportOf(const std::vector<std::string> &paths, std::optional<std::int64_t> budget = {})
{
    std::vector<std::pair<std::string, TracePtr>> traces;
    for (const std::string &path : paths)
        traces.emplace_back(path, loadTrace(path));
    return buildReport(traces, budget);
}

QString xmlProblem(const std::string &html)
{
    QXmlStreamReader reader(QByteArray::fromStdString(html));
    while (!reader.atEnd())
        reader.readNext();
    return reader.hasError() ? QStringLiteral("line %1: %2").arg(reader.lineNumber()).arg(reader.errorString()) : QString();
}

// Splits CSV text into rows of fields, following RFC 4180 quoting.
QList<QStringList> parseCsv(const QString &text)
{
    QList<QStringList> rows;
    QStringList row;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < text.size() && text[i + 1] == QLatin1Char('"'))
                field += QLatin1Char('"'), ++i;
            else if (c == QLatin1Char('"'))
                quoted = false;
            else
                field += c;
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            row << field;
            field.clear();
        } else if (c == QLatin1Char('\n')) {
            row << field;
            rows << row;
            row.clear();
            field.clear();
        } else {
            field += c;
        }
    }
    return rows;
}

} // namespace

class tst_Report : public QObject
{
    Q_OBJECT

private slots:
    void htmlIsWellFormedAndSelfContained_data()
    {
        QTest::addColumn<QStringList>("paths");
        QTest::addRow("replayed sample") << QStringList{qs(kSample)};
        QTest::addRow("modelled trace with stacks and segments") << QStringList{qs(kModelled)};
        QTest::addRow("two runs compared") << QStringList{qs(kSample), qs(kSample)};
        QTest::addRow("no chain (kineto)") << QStringList{QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/kineto.pt.trace.json")};
    }

    void htmlIsWellFormedAndSelfContained()
    {
        QFETCH(QStringList, paths);
        std::vector<std::string> files;
        for (const QString &path : paths)
            files.push_back(ss(path));
        const std::string html = renderHtmlReport(reportOf(files));
        QVERIFY2(xmlProblem(html).isEmpty(), qPrintable(xmlProblem(html)));
        QVERIFY(html.find("http://") == std::string::npos);
        QVERIFY(html.find("https://") == std::string::npos);
        QVERIFY(html.find("<script") == std::string::npos);
        QVERIFY(html.find("@media print") != std::string::npos);
    }

    // The report says what `summary --json` says: the peak and each leaf layer's activations.
    // A rerun compared with its baseline: the change of step time the model predicted (the
    // what-if bar's figure) beside the change measured against the baseline run again
    // beside it, and the rerun's own plans left to the baseline.
    void rerunsReadAsTheRunsTable()
    {
        const TracePtr base = loadTrace(kSample);
        auto toggled = std::make_shared<Trace>(*base);
        toggled->meta[std::string(metakey::Checkpoint)] = "blocks.2,blocks.3,blocks.4";
        ReplayResult measured;
        measured.peakAllocatedBytes = 195847176;
        measured.stepTimesMs = {471.4, 494.6, 493.4, 462.9, 464.0};
        measured.baseline = ReplaySteps{.stepTimesMs = {401.9, 384.0, 368.5, 386.4, 381.3}};
        const ReportData data = buildReport(
            {{kSample, analyseTrace(kSample, base), std::nullopt}, {"rerun 1", analyseTrace("rerun 1", toggled), measured}},
            std::nullopt);
        QCOMPARE(data.comparisons.size(), std::size_t(1));
        QVERIFY(data.comparisons.front().row);
        const CostModel &model = *data.runs.front().analysed->model;
        const StepChange change =
            stepChange(data.comparisons.front().row->predicted.stepTimeNs, predict(model, CheckpointSchedule{}).stepTimeNs,
                       measured.baselineStepTimesMs(), measured.stepTimesMs);
        QVERIFY(change.predictedPercent > 0 && change.measured);
        const std::string html = renderHtmlReport(data);
        QVERIFY2(html.find(">" + signedPercentText(change.predictedPercent) + "<") != std::string::npos, html.c_str());
        QVERIFY(html.find(escapeHtml(changeText(*change.measured))) != std::string::npos);
        QVERIFY(html.find(">baseline</th>") != std::string::npos);
        QVERIFY(html.find("This run already checkpoints 3 layers") != std::string::npos);
    }

    void htmlCarriesTheSummaryFigures()
    {
        const ReportData data = reportOf({kSample});
        const std::string html = renderHtmlReport(data);
        const ReportRun &run = data.runs.front();
        const auto &peak = run.analysed->summary.peak.devices[*run.analysed->summary.peak.primary];
        QVERIFY(html.find("id=\"peak\">" + formatBytes(peak.allocatedBytes) + "<") != std::string::npos);
        for (const char *layer : {"blocks.0", "blocks.5", "embed", "loss"}) {
            const auto index = *run.analysed->trace->findLayer(layer);
            const std::string bar = escapeHtml(layer) + "</text><rect";
            QVERIFY2(html.find(bar) != std::string::npos, layer);
            QVERIFY(html.find(formatBytes(run.analysed->summary.layers[index].activationBytes)) != std::string::npos);
        }
        QVERIFY(html.find("cheapest within") != std::string::npos);
    }

    void hostileNamesAreEscaped()
    {
        const auto trace =
            test::traceFrom(QStringLiteral("layer blocks.0 kind=<script>alert(1)</script>&\"'\n"
                                           "begin step 1\nbegin fwd:blocks.0\nalloc a 100 activation\nend fwd:blocks.0\n"
                                           "begin bwd:blocks.0\nfree a\nend bwd:blocks.0\nend step 1\n"));
        const std::string html = renderHtmlReport(buildReport({{"<evil>&\"file\x01.pltxt", trace}}, std::nullopt));
        QVERIFY2(xmlProblem(html).isEmpty(), qPrintable(xmlProblem(html)));
        QVERIFY(html.find("<script>") == std::string::npos);
        QVERIFY(html.find("&lt;evil&gt;&amp;&quot;file") != std::string::npos);
    }

    void csvParsesBackToTheSameNumbers()
    {
        const ReportData data = reportOf({kSample});
        const ReportRun &run = data.runs.front();
        const auto layers = parseCsv(qs(renderCsvReport(data, CsvTable::Layers)));
        QCOMPARE(layers.size(), qsizetype(run.analysed->trace->layers.size() + 1));
        QCOMPARE(layers.front().value(4), QStringLiteral("activation_bytes"));
        for (qsizetype i = 1; i < layers.size(); ++i) {
            const auto layer = run.analysed->trace->findLayer(ss(layers[i][1]));
            QVERIFY(layer);
            QCOMPARE(layers[i][4].toLongLong(), run.analysed->summary.layers[*layer].activationBytes);
            QCOMPARE(layers[i][3].toLongLong(), run.analysed->trace->layers[*layer].parameterBytes);
        }
        const auto plans = parseCsv(qs(renderCsvReport(data, CsvTable::Plans)));
        QCOMPARE(plans.size(), qsizetype(run.plans.size() + 1));
        for (std::size_t i = 0; i < run.plans.size(); ++i)
            QCOMPARE(plans[qsizetype(i) + 1][4].toLongLong(), run.plans[i].plan.prediction.peakBytes);
        const auto events = parseCsv(qs(renderCsvReport(data, CsvTable::Events)));
        QCOMPARE(events.size(), qsizetype(run.analysed->trace->events.size() + 1));
        qint64 sum = 0;
        for (qsizetype i = 1; i < events.size(); ++i)
            sum += events[i][2].toLongLong();
        qint64 expected = 0;
        for (std::size_t i = 0; i < run.analysed->trace->events.size(); ++i)
            expected += run.analysed->trace->events.deltaBytes(i);
        QCOMPARE(sum, expected);
    }

    // A real snapshot: the sites at the peak name the user's code, in the CSV and the HTML.
    void sitesNameTheUsersCode()
    {
        const ReportData data = reportOf({PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz"});
        const auto sites = parseCsv(qs(renderCsvReport(data, CsvTable::Sites)));
        QCOMPARE(sites.front().join(QLatin1Char(',')), QStringLiteral("trace,site,location,kind,called_from,bytes,blocks"));
        qint64 total = 0;
        QStringList user;
        for (qsizetype i = 1; i < sites.size(); ++i) {
            total += sites[i][5].toLongLong();
            if (sites[i][3] == QLatin1String("user"))
                user << sites[i][1];
        }
        QCOMPARE(total, data.runs.front().analysed->summary.peak.liveAtPeak->bytes);
        QCOMPARE(user.value(0), QStringLiteral("step (optimizer.py:80)"));
        QVERIFY(user.contains(QStringLiteral("forward (model.py:39)")));
        const std::string html = renderHtmlReport(data);
        QVERIFY(html.find("step (optimizer.py:80) — called from memory_profile (nsys_profile.py:145)") != std::string::npos);
        QCOMPARE(xmlProblem(html), QString());
    }

    // A long layer path may wrap after its dots, so the live table stays within the page.
    void longLayerPathsWrap()
    {
        const ReportData data = reportOf({PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_windows_opt_forward_passes.pickle.gz"});
        const std::string html = renderHtmlReport(data);
        QVERIFY(html.find("<td>model_helpers:70.<wbr/>modeling_opt:818.<wbr/>modeling_opt:648[0].<wbr/>") != std::string::npos);
        QVERIFY(html.find("td { overflow-wrap: anywhere; }") != std::string::npos);
        QCOMPARE(xmlProblem(html), QString());
    }

    // A snapshot of the allocator's state alone: no timeline, the verdict instead.
    void aStateOnlySnapshotGetsItsVerdict()
    {
        const ReportData data = reportOf({PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_state_only_verl_qwen2.pickle.gz"});
        const std::string html = renderHtmlReport(data);
        QVERIFY(html.find("Memory over time") == std::string::npos);
        QVERIFY(html.find("Allocator state at dump time; no history was recorded.") != std::string::npos);
        QVERIFY(html.find("<p class=\"verdict\">On cuda:0, 23.73 GiB of the 24.39 GiB reserved is allocated")
                != std::string::npos);
        QVERIFY(html.find("Verdict: the device is full.") != std::string::npos);
        QCOMPARE(xmlProblem(html), QString());
    }

    void csvFields_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::addRow("plain") << QStringLiteral("blocks.0") << QStringLiteral("blocks.0");
        QTest::addRow("comma") << QStringLiteral("a,b") << QStringLiteral("\"a,b\"");
        QTest::addRow("quote") << QStringLiteral("say \"hi\"") << QStringLiteral("\"say \"\"hi\"\"\"");
        QTest::addRow("newline, one row a line") << QStringLiteral("a\nb") << QStringLiteral("a\\x0Ab");
        QTest::addRow("formula") << QStringLiteral("=cmd()") << QStringLiteral("'=cmd()");
        QTest::addRow("formula after a tab") << QStringLiteral("\t=cmd()") << QStringLiteral("\\x09=cmd()");
    }

    // A trace's path comes from the file system as bytes: the CSV stays valid UTF-8.
    void csvPathThatIsNotUtf8() { QCOMPARE(csvField("caf\xFF.pickle"), std::string("caf\\xFF.pickle")); }

    void csvFields()
    {
        QFETCH(QString, text);
        QFETCH(QString, field);
        QCOMPARE(qs(csvField(ss(text))), field);
    }

    void jsonHasSummaryPlansAndComparison()
    {
        const ReportData data = reportOf({kSample, kSample}, std::int64_t(200) << 20);
        const QJsonObject json = QJsonDocument::fromJson(QByteArray::fromStdString(renderJsonReport(data))).object();
        QCOMPARE(json[QStringLiteral("format")].toString(), QStringLiteral("peaklens-report"));
        QCOMPARE(json[QStringLiteral("budget_bytes")].toInteger(), qint64(200) << 20);
        const QJsonArray runs = json[QStringLiteral("runs")].toArray();
        QCOMPARE(runs.size(), 2);
        const QJsonObject first = runs[0].toObject();
        QCOMPARE(first[QStringLiteral("peak_allocated_bytes")].toInteger(), data.runs[0].analysed->peakBytes);
        QCOMPARE(first[QStringLiteral("summary")]
                     .toObject()[QStringLiteral("peak")]
                     .toObject()[QStringLiteral("allocated_bytes")]
                     .toInteger(),
                 data.runs[0].analysed->peakBytes);
        QCOMPARE(first[QStringLiteral("plans")].toArray().size(), qsizetype(data.runs[0].plans.size()));
        const QJsonObject comparison = json[QStringLiteral("comparisons")].toArray()[0].toObject();
        // The same trace twice: nothing toggled, so the prediction is the measured baseline.
        QCOMPARE(comparison[QStringLiteral("predicted")].toObject()[QStringLiteral("peak_bytes")].toInteger(),
                 data.runs[0].analysed->peakBytes);
    }

    // People read "optimizer state" in the HTML and the PDF; programs reading the JSON and
    // the CSV get the file's "optimizer_state".
    void categoryNamesForPeopleAndForPrograms_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("present");
        QTest::addColumn<QString>("absent");
        QTest::addRow("html") << QStringLiteral("html") << QStringLiteral(">optimizer state<")
                              << QStringLiteral("optimizer_state");
        QTest::addRow("html for the pdf, charts aside")
            << QStringLiteral("pdf") << QStringLiteral(">optimizer state<") << QStringLiteral("optimizer_state");
        QTest::addRow("json") << QStringLiteral("json") << QStringLiteral("\"optimizer_state\"")
                              << QStringLiteral("optimizer state");
        QTest::addRow("csv events") << QStringLiteral("csv") << QStringLiteral(",optimizer_state,")
                                    << QStringLiteral("optimizer state");
    }
    void categoryNamesForPeopleAndForPrograms()
    {
        QFETCH(QString, format);
        QFETCH(QString, present);
        QFETCH(QString, absent);
        const ReportData data = reportOf({kSample});
        std::string text;
        if (format == QLatin1String("html")) {
            text = renderHtmlReport(data);
        } else if (format == QLatin1String("pdf")) {
            const HtmlWithCharts report = renderHtmlReportWithChartImages(data);
            text = report.html;
            for (const std::string &chart : report.charts)
                text += chart;
        } else if (format == QLatin1String("json")) {
            text = renderJsonReport(data);
        } else {
            text = renderCsvReport(data, CsvTable::Events);
        }
        QVERIFY(qs(text).contains(present));
        QVERIFY(!qs(text).contains(absent));
    }

    // Column headers are single words, with the name of a group of columns above them:
    // a narrow column of the printed page never breaks a header inside a word.
    void columnHeadersAreSingleWords_data()
    {
        QTest::addColumn<QStringList>("paths");
        QTest::addRow("one run") << QStringList{qs(kModelled)};
        QTest::addRow("two runs compared") << QStringList{qs(kSample), qs(kModelled)};
    }
    void columnHeadersAreSingleWords()
    {
        QFETCH(QStringList, paths);
        std::vector<std::string> files;
        for (const QString &path : paths)
            files.push_back(ss(path));
        const QString html = qs(renderHtmlReportWithChartImages(reportOf(files)).html);
        static const QRegularExpression header(QStringLiteral("<th( class=\"([^\"]*)\")?[^>]*>([^<]*)</th>"));
        int checked = 0;
        for (const QRegularExpressionMatch &match : header.globalMatch(html)) {
            const QString kind = match.captured(2);
            if (kind == QLatin1String("key") || kind == QLatin1String("group")) // a row's name; a group's, over its columns
                continue;
            QVERIFY2(!match.captured(3).contains(QLatin1Char(' ')), qPrintable(match.captured(0)));
            ++checked;
        }
        QVERIFY(checked >= 10);
    }

    // The charts the PDF draws from standalone SVG carry their font and their legend:
    // Qt's SVG renderer sees no stylesheet.
    void chartsAsideCarryTheirFontAndLegend()
    {
        const HtmlWithCharts report = renderHtmlReportWithChartImages(reportOf({kSample}));
        QCOMPARE(report.charts.size(), std::size_t(3)); // timeline, activations, flame graph by module
        for (std::size_t i = 0; i < report.charts.size(); ++i)
            QVERIFY(report.html.find("<img src=\"chart:" + std::to_string(i) + "\"") != std::string::npos);
        const std::string &timeline = report.charts.front();
        QVERIFY(timeline.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        QVERIFY(timeline.find("<g font-family=") != std::string::npos);
        QVERIFY(timeline.find(">activation</text>") != std::string::npos);
        QCOMPARE(xmlProblem(timeline), QString());
        QVERIFY(report.charts.back().find("aria-label=\"live memory at the peak by module\"") != std::string::npos);
        QCOMPARE(xmlProblem(report.charts.back()), QString());
    }

    // What is live at the peak as flame graphs: by call stack where the trace has stacks, by
    // module where it has layers; the top box holds the live set's total.
    void flameGraphsOfTheLiveSet_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("byStack");
        QTest::addColumn<bool>("byModule");
        QTest::addColumn<QString>("frame"); // a box the graph must label
        QTest::addRow("replayed sample: layers, no stacks") << qs(kSample) << false << true << QStringLiteral(">blocks</text>");
        QTest::addRow("modelled trace with stacks and layers")
            << qs(kModelled) << true << true << QStringLiteral(">forward (model.py:");
        QTest::addRow("real snapshot: stacks")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_medium_train.pickle.gz") << true << true
            << QStringLiteral(">(allocated before the trace began)</text>");
        QTest::addRow("real Kineto trace: stacks and module spans")
            << QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/kineto_h100_qwen_inference.pt.trace.json.gz") << true << true
            << QStringLiteral(">Qwen2Model_0</text>");
    }

    void flameGraphsOfTheLiveSet()
    {
        QFETCH(QString, path);
        QFETCH(bool, byStack);
        QFETCH(bool, byModule);
        QFETCH(QString, frame);
        const ReportData data = reportOf({ss(path)});
        const std::string html = renderHtmlReport(data);
        QCOMPARE(xmlProblem(html), QString());
        QCOMPARE(html.find("class=\"flamegraph\">Flame graph by call stack") != std::string::npos, byStack);
        QCOMPARE(html.find("class=\"flamegraph\">Flame graph by module") != std::string::npos, byModule);
        const LiveSet &live = *data.runs.front().analysed->summary.peak.liveAtPeak;
        const std::string root = ">all live memory \xe2\x80\x94 " + formatBytes(live.bytes) + "</text>";
        QCOMPARE(qsizetype(QString::fromStdString(html).count(qs(root))), qsizetype(int(byStack) + int(byModule)));
        QVERIFY2(html.find(ss(frame)) != std::string::npos, qPrintable(frame));
        // Every box says in full what it is.
        const auto boxes = QString::fromStdString(html).count(QStringLiteral("<g><title>"));
        QVERIFY(boxes > 3);
        QCOMPARE(QString::fromStdString(html).count(QStringLiteral("</title><rect")), boxes);
    }

    // Bytes that are not UTF-8 in what a trace holds, as a plug-in or a future importer
    // could leave them (the loaders escape them), never make a writer throw: each comes out
    // as \xHH and the output stays valid.
    void bytesNotUtf8NeverBreakTheOutput_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("shown");
        // JSON escapes the backslash once more.
        QTest::addRow("report json") << QStringLiteral("json") << QStringLiteral("blocks.\\\\xFF");
        QTest::addRow("summary json") << QStringLiteral("summary") << QStringLiteral("caf\\\\xE9");
        QTest::addRow("html") << QStringLiteral("html") << QStringLiteral("blocks.\\xFF");
        QTest::addRow("csv layers") << QStringLiteral("csv") << QStringLiteral("blocks.\\xFF");
    }
    void bytesNotUtf8NeverBreakTheOutput()
    {
        QFETCH(QString, format);
        QFETCH(QString, shown);
        Trace raw = *test::traceFrom(QStringLiteral("meta description cafe\nlayer blocks.0 kind=Block\n"
                                                    "begin step 1\nbegin fwd:blocks.0\nalloc a 100 activation\nend fwd:blocks.0\n"
                                                    "begin bwd:blocks.0\nfree a\nend bwd:blocks.0\nend step 1\n"));
        raw.layers[*raw.findLayer("blocks.0")].path = "blocks.\xff";
        raw.layers[*raw.findLayer("blocks.\xff")].kind = "Bl\xc3ock";
        raw.meta["description"] = "caf\xe9";
        raw.meta["key \xfe"] = "value";
        const auto trace = std::make_shared<const Trace>(std::move(raw));
        const ReportData data = buildReport({{"run \xff.pltxt", trace}}, std::nullopt);
        std::string text;
        if (format == QLatin1String("json"))
            text = renderJsonReport(data);
        else if (format == QLatin1String("summary"))
            text = summaryToJson(*trace, data.runs.front().analysed->summary, std::nullopt);
        else if (format == QLatin1String("html"))
            text = renderHtmlReport(data);
        else
            text = renderCsvReport(data, CsvTable::Layers);
        const QByteArray bytes = QByteArray::fromStdString(text);
        QVERIFY(QString::fromUtf8(bytes).toUtf8() == bytes); // valid UTF-8 throughout
        if (format == QLatin1String("json") || format == QLatin1String("summary")) {
            QJsonParseError error;
            QJsonDocument::fromJson(bytes, &error);
            QCOMPARE(error.error, QJsonParseError::NoError);
        }
        if (format == QLatin1String("html"))
            QCOMPARE(xmlProblem(text), QString());
        QVERIFY2(QString::fromUtf8(bytes).contains(shown), qPrintable(shown));
    }

    void writesAtomically()
    {
        QTemporaryDir directory;
        const std::string path = ss(directory.filePath(QStringLiteral("report.html")));
        OutputFile(path, OutputFile::Existing::Replace).write("first");
        OutputFile(path, OutputFile::Existing::Replace).write("second");
        QFile file(qs(path));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("second"));
        QCOMPARE(QDir(directory.path()).entryList(QDir::Files).size(), 1); // no temporary left
        QVERIFY_THROWS_EXCEPTION(FileError, OutputFile("/nonexistent/dir/report.html", OutputFile::Existing::Replace).write("x"));
    }
};

QTEST_GUILESS_MAIN(tst_Report)
#include "tst_report.moc"
