// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/import/traceloader.h"
#include "core/report/palette.h"
#include "core/report/reportcharts.h"
#include "core/trace/tracebuilder.h"

#include <QRegularExpression>

using namespace peaklens;
using test::qs;

namespace {

const std::string kSample = PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens";
const std::string kModelled = PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt";

ReportData reportOf(const std::vector<std::string> &paths)
{
    std::vector<std::pair<std::string, TracePtr>> traces;
    for (const std::string &path : paths)
        traces.emplace_back(path, loadTrace(path));
    return buildReport(traces, std::nullopt);
}

QString elementsOf(const std::optional<SvgChart> &chart)
{
    return chart ? qs(chart->elements) : QString();
}

QString hex(palette::Rgb color)
{
    return qs(palette::hex(color));
}

// The texts of the chart's <text> elements.
QStringList textsOf(const QString &elements)
{
    QStringList texts;
    static const QRegularExpression text(QStringLiteral("<text [^>]*>([^<]*)</text>"));
    for (const QRegularExpressionMatch &match : text.globalMatch(elements))
        texts << match.captured(1);
    return texts;
}

} // namespace

class tst_ReportCharts : public QObject
{
    Q_OBJECT

private slots:
    // Each category the timeline stacks has a swatch in its legend, drawn in the SVG in
    // the palette's colour, next to the name people read.
    void timelineLegendHasASwatchPerCategory_data()
    {
        QTest::addColumn<int>("category");
        for (const Category category : {Category::Activation, Category::OptimizerState, Category::Parameter, Category::Gradient,
                                        Category::Temporary, Category::Input})
            QTest::addRow("%s", std::string(categoryName(category)).c_str()) << static_cast<int>(category);
    }
    void timelineLegendHasASwatchPerCategory()
    {
        QFETCH(int, category);
        const auto shown = static_cast<Category>(category);
        const QString elements = elementsOf(timelineChart(reportOf({kSample}).runs.front()));
        const QString swatch = QStringLiteral("<rect [^>]*fill=\"") + hex(palette::categoryColor(shown))
                               + QStringLiteral("\"/><text [^>]*>") + qs(std::string(palette::categoryLabel(shown)))
                               + QStringLiteral("</text>");
        QVERIFY2(elements.contains(QRegularExpression(swatch)), qPrintable(swatch));
        // And the band itself, in the same colour.
        QVERIFY(elements.contains(QStringLiteral("<polygon points=\"")));
        QVERIFY(elements.contains(QStringLiteral("fill=\"") + hex(palette::categoryColor(shown))
                                  + QStringLiteral("\" fill-opacity")));
    }

    // The lines and shading, each in its palette colour and named in the legend.
    void timelineLegendNamesLinesAndPhases_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("mark");
        QTest::addRow("allocated") << qs(kModelled)
                                   << QStringLiteral("<line [^>]*stroke=\"") + hex(palette::kTotal)
                                          + QStringLiteral("\" stroke-width=\"2\"/><text [^>]*>allocated</text>");
        QTest::addRow("reserved, dashed")
            << qs(kModelled)
            << QStringLiteral("<line [^>]*stroke=\"") + hex(palette::kReserved)
                   + QStringLiteral("\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/><text [^>]*>reserved</text>");
        for (const Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
            const std::string name(phaseName(phase));
            QTest::addRow("%s shading", name.c_str())
                << qs(kSample)
                << QStringLiteral("<rect [^>]*fill=\"") + hex(palette::phaseColor(phase))
                       + QStringLiteral("\" stroke=\"[^\"]*\"/><text [^>]*>") + qs(name) + QStringLiteral(" pass</text>");
        }
    }
    void timelineLegendNamesLinesAndPhases()
    {
        QFETCH(QString, path);
        QFETCH(QString, mark);
        const QString elements = elementsOf(timelineChart(reportOf({test::ss(path)}).runs.front()));
        QVERIFY2(elements.contains(QRegularExpression(mark)), qPrintable(mark));
    }

    // Axes read in round steps of the unit the values reach: 0, 50, ... 300 MiB for a
    // peak of 273.8 MiB, not 75.30, 150.6, 225.9 MiB.
    void axesTickAtRoundNumbers_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QStringList>("timeline");
        QTest::addColumn<QStringList>("bars");
        QTest::addRow("replayed sample: 273.8 MiB over 1.35 s")
            << qs(kSample) << QStringList{QStringLiteral("0"),       QStringLiteral("50 MiB"),  QStringLiteral("100 MiB"),
                                          QStringLiteral("150 MiB"), QStringLiteral("200 MiB"), QStringLiteral("250 MiB"),
                                          QStringLiteral("300 MiB"), QStringLiteral("0.2 s"),   QStringLiteral("0.4 s"),
                                          QStringLiteral("1.2 s")}
            << QStringList{QStringLiteral("0"), QStringLiteral("10 MiB"), QStringLiteral("20 MiB"), QStringLiteral("30 MiB")};
        QTest::addRow("modelled step: 2.141 GiB over 34 ms")
            << qs(kModelled)
            << QStringList{QStringLiteral("0.5 GiB"), QStringLiteral("1.0 GiB"), QStringLiteral("2.5 GiB"),
                           QStringLiteral("5 ms"), QStringLiteral("30 ms")}
            << QStringList{QStringLiteral("100 MiB"), QStringLiteral("400 MiB")};
    }
    void axesTickAtRoundNumbers()
    {
        QFETCH(QString, path);
        QFETCH(QStringList, timeline);
        QFETCH(QStringList, bars);
        const ReportRun run = reportOf({test::ss(path)}).runs.front();
        const QStringList timelineTexts = textsOf(elementsOf(timelineChart(run)));
        for (const QString &label : timeline)
            QVERIFY2(timelineTexts.contains(label),
                     qPrintable(label + QStringLiteral(" not in ") + timelineTexts.join(QStringLiteral(" | "))));
        const QStringList barTexts = textsOf(elementsOf(layerBarsChart(run)));
        for (const QString &label : bars)
            QVERIFY2(barTexts.contains(label),
                     qPrintable(label + QStringLiteral(" not in ") + barTexts.join(QStringLiteral(" | "))));
        // Every axis label is a round number: one significant digit, or two for steps of
        // 0.5, 1.5, 15, 25, 250 ...
        static const QRegularExpression axisLabel(QStringLiteral("^(\\d+(\\.\\d+)?) (B|KiB|MiB|GiB|TiB|ns|us|ms|s)$"));
        for (const QString &text : timelineTexts) {
            const QRegularExpressionMatch match = axisLabel.match(text);
            if (!match.hasMatch())
                continue;
            QString digits = match.captured(1);
            digits.remove(QLatin1Char('.'));
            while (digits.endsWith(QLatin1Char('0')))
                digits.chop(1);
            while (digits.startsWith(QLatin1Char('0')))
                digits.remove(0, 1);
            QVERIFY2(digits.size() <= 2, qPrintable(text));
        }
    }

    // One run compared: its prediction dashed in the palette's prediction colour, its
    // measurement in the measured colour, the baseline in the total's.
    void comparisonUsesThePalette_data()
    {
        QTest::addColumn<QString>("mark");
        QTest::addRow("baseline")
            << QStringLiteral("<line [^>]*stroke=\"") + hex(palette::kTotal)
                   + QStringLiteral("\" stroke-width=\"2\"/><text [^>]*>baseline training-step.peaklens, measured</text>");
        QTest::addRow("predicted")
            << QStringLiteral("<line [^>]*stroke=\"") + hex(palette::kPredicted)
                   + QStringLiteral(
                       "\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/><text [^>]*>modelled-step.pltxt, predicted</text>");
        QTest::addRow("measured") << QStringLiteral("<line [^>]*stroke=\"") + hex(palette::kMeasured)
                                         + QStringLiteral(
                                             "\" stroke-width=\"2\"/><text [^>]*>modelled-step.pltxt, measured</text>");
    }
    void comparisonUsesThePalette()
    {
        QFETCH(QString, mark);
        const QString elements = elementsOf(comparisonChart(reportOf({kSample, kModelled})));
        QVERIFY2(elements.contains(QRegularExpression(mark)), qPrintable(mark));
    }

    // A layer's name longer than the room beside its bar keeps its end, which says which
    // module it is, and never runs off the chart.
    void longLayerNamesKeepTheirEnd()
    {
        TraceBuilder builder;
        const std::string longName = "model.encoder.layers.11.self_attention.attention_probabilities.dropout";
        const std::uint32_t layer = builder.layer(longName);
        builder.lane(Lane{});
        builder.addRange(Range{layer, Phase::Forward, kNoStep, 0, 10, 0});
        builder.addRange(Range{layer, Phase::Backward, kNoStep, 20, 30, 0});
        MemoryEvent alloc{5, 4096, 1};
        alloc.layer = layer;
        alloc.category = Category::Activation;
        alloc.phase = Phase::Forward;
        builder.addEvent(alloc);
        MemoryEvent free{25, -4096, 1};
        free.layer = layer;
        free.phase = Phase::Backward;
        builder.addEvent(free);
        const ReportData data = buildReport({{"long.pltxt", builder.finish()}}, std::nullopt);
        const QStringList texts = textsOf(elementsOf(layerBarsChart(data.runs.front())));
        QVERIFY(!texts.isEmpty());
        const QString shown = texts.filter(QStringLiteral("dropout")).value(0);
        QVERIFY2(shown.startsWith(QStringLiteral("\u2026")), qPrintable(shown));
        QVERIFY(qs(longName).endsWith(shown.mid(1)));
        QVERIFY(shown.size() < qsizetype(longName.size()));
    }
};

QTEST_GUILESS_MAIN(tst_ReportCharts)
#include "tst_reportcharts.moc"
