// SPDX-License-Identifier: Apache-2.0
#include "reportcharts.h"

#include "chartaxis.h"
#include "palette.h"
#include "svgdrawing.h"

#include "core/analysis/levelofdetail.h"
#include "core/analysis/phasespans.h"
#include "core/analysis/stepalignment.h"
#include "core/trace/units.h"

#include <algorithm>
#include <filesystem>

namespace peaklens {

namespace {

using svg::number;

// As wide as the PDF's page shows without scaling the text down much (680 px), and
// narrower than the HTML page's column.
constexpr int kWidth = 760;
// The ticks an axis aims for: enough to read a value off, few enough to keep labels apart.
constexpr int kValueTicks = 5;
constexpr int kTimeTicks = 8;

// Maps time and bytes into a chart's plot area.
struct PlotArea
{
    double left = 72, top = 20, width = kWidth - 72 - 28, height = 220;
    std::int64_t beginNs = 0, endNs = 1;
    double maxBytes = 1;

    double x(std::int64_t ns) const
    {
        return left + width * static_cast<double>(ns - beginNs) / static_cast<double>(std::max<std::int64_t>(1, endNs - beginNs));
    }
    double y(double bytes) const { return top + height * (1.0 - bytes / maxBytes); }
    double bottom() const { return top + height; }
};

// A step function as an SVG path (each value holds until the next point).
std::string stepPath(const PlotArea &frame, const std::vector<std::pair<std::int64_t, std::int64_t>> &points)
{
    std::string d;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const std::string x = number(frame.x(points[i].first)), y = number(frame.y(static_cast<double>(points[i].second)));
        d.append(i == 0 ? "M" : " H").append(x).append(i == 0 ? " " : " V").append(y);
    }
    return d;
}

std::string line(double x1, double y1, double x2, double y2, palette::Rgb color)
{
    return "<line x1=\"" + number(x1) + "\" y1=\"" + number(y1) + "\" x2=\"" + number(x2) + "\" y2=\"" + number(y2)
           + "\" stroke=\"" + palette::hex(color) + "\"/>";
}

// Grid lines at the bytes ticks, and the time ticks under the plot; `time` counts from
// the frame's beginning.
std::string axes(const PlotArea &frame, const ChartAxis &bytes, const ChartAxis &time)
{
    std::string out;
    for (std::size_t i = 0; i < bytes.ticks.size(); ++i) {
        const double y = frame.y(bytes.ticks[i]);
        out += line(frame.left, y, frame.left + frame.width, y, palette::kGrid);
        out += svg::text(frame.left - 6, y + 4, bytes.labels[i], "end");
    }
    out += line(frame.left, frame.bottom(), frame.left + frame.width, frame.bottom(), palette::kAxis);
    for (std::size_t i = 0; i < time.ticks.size(); ++i) {
        const double x = frame.left + frame.width * time.ticks[i] / time.end;
        out += line(x, frame.bottom(), x, frame.bottom() + 4, palette::kAxis);
        // The last label may sit at the right edge: it ends there rather than running off.
        const bool fits = x + svg::textWidth(time.labels[i]) / 2 <= kWidth;
        out += svg::text(fits ? x : kWidth, frame.bottom() + 17, time.labels[i], fits ? "middle" : "end");
    }
    return out;
}

std::string fileName(const std::string &path)
{
    return std::filesystem::path(path).filename().string();
}

std::string categoryShown(const GroupSeries &group)
{
    if (group.key < static_cast<std::uint32_t>(kCategoryCount))
        return std::string(palette::categoryLabel(static_cast<Category>(group.key)));
    return group.label;
}

palette::Rgb categoryColorOf(const GroupSeries &group, std::size_t index)
{
    if (group.key < static_cast<std::uint32_t>(kCategoryCount))
        return palette::categoryColor(static_cast<Category>(group.key));
    return palette::seriesColor(index);
}

// Stacked bands, each column showing the groups as they stood where the column reached
// its highest point; the groups past `shown` together as one more band, so that the stack
// always reaches the envelope.
std::string stackedBands(const PlotArea &frame, const TimelineSeries &timeline, const std::vector<StackedColumn> &columns,
                         std::size_t shown)
{
    std::string out;
    std::vector<std::size_t> bands;
    for (std::size_t g = 0; g < shown; ++g)
        bands.push_back(g);
    if (shown < timeline.groups.size())
        bands.push_back(kRestOfGroups);
    const auto tops = bandTops(columns, bands);
    std::vector<std::int64_t> below(columns.size(), 0);
    for (std::size_t g = 0; g < bands.size(); ++g) {
        std::string upper, lower;
        const std::vector<std::int64_t> &above = tops[g];
        for (std::size_t c = 0; c < columns.size(); ++c) {
            const std::string x0 = number(frame.x(columns[c].range.beginNs));
            const std::string x1 = number(frame.x(c + 1 < columns.size() ? columns[c + 1].range.beginNs : frame.endNs));
            const std::string y = number(frame.y(static_cast<double>(above[c])));
            upper.append(x0).append(",").append(y).append(" ").append(x1).append(",").append(y).append(" ");
        }
        for (std::size_t c = columns.size(); c-- > 0;) {
            const std::string x0 = number(frame.x(columns[c].range.beginNs));
            const std::string x1 = number(frame.x(c + 1 < columns.size() ? columns[c + 1].range.beginNs : frame.endNs));
            const std::string y = number(frame.y(static_cast<double>(below[c])));
            lower.append(x1).append(",").append(y).append(" ").append(x0).append(",").append(y).append(" ");
        }
        const palette::Rgb color = g < shown ? categoryColorOf(timeline.groups[g], g) : palette::kOther;
        out.append("<polygon points=\"").append(upper).append(lower).append("\" fill=\"");
        out.append(palette::hex(color)).append("\" fill-opacity=\"0.85\"/>");
        below = above;
    }
    return out;
}

} // namespace

std::optional<SvgChart> timelineChart(const ReportRun &run)
{
    const TimelineSeries &timeline = run.analysed->byCategory;
    if (timeline.allocated.empty())
        return std::nullopt;
    PlotArea frame;
    frame.beginNs = timeline.allocated.front().timeNs;
    frame.endNs = std::max(timeline.allocated.back().timeNs, frame.beginNs + 1);
    std::int64_t top = 0;
    for (const SeriesPoint &point : timeline.allocated)
        top = std::max(top, point.bytes);
    for (const SeriesPoint &point : timeline.reserved)
        top = std::max(top, point.bytes);
    const ChartAxis bytes = bytesAxis(static_cast<double>(top), kValueTicks);
    const ChartAxis time = timeAxis(static_cast<double>(frame.endNs - frame.beginNs), kTimeTicks);
    frame.maxBytes = bytes.end;
    const int columnCount = static_cast<int>(frame.width / 2); // two pixels per column
    const auto columns = stackColumns(timeline, frame.beginNs, frame.endNs, columnCount);

    std::string elements;
    std::vector<svg::LegendEntry> legend;
    // Phase shading, when there are few enough steps to see it.
    bool shaded[kPhaseCount] = {};
    if (run.analysed->trace->steps.size() <= 200) {
        for (const PhaseSpan &span : phaseSpans(*run.analysed->trace)) {
            shaded[static_cast<int>(span.phase)] = true;
            elements += "<rect x=\"" + number(frame.x(span.beginNs)) + "\" y=\"" + number(frame.top) + "\" width=\""
                        + number(std::max(0.5, frame.x(span.endNs) - frame.x(span.beginNs))) + "\" height=\""
                        + number(frame.height) + "\" fill=\"" + palette::hex(palette::phaseColor(span.phase)) + "\"/>";
        }
    }
    elements += axes(frame, bytes, time);
    // Few categories hold most memory; more bands would be hard to tell apart.
    const std::size_t shown = std::min<std::size_t>(timeline.groups.size(), 7);
    elements += stackedBands(frame, timeline, columns, shown);
    for (std::size_t g = 0; g < shown; ++g)
        legend.push_back(
            {categoryShown(timeline.groups[g]), categoryColorOf(timeline.groups[g], g), svg::LegendEntry::Mark::Swatch});
    if (shown < timeline.groups.size())
        legend.push_back({"other", palette::kOther, svg::LegendEntry::Mark::Swatch});

    // The envelope: a line along each column's highest value.
    std::vector<std::pair<std::int64_t, std::int64_t>> envelope;
    envelope.reserve(columns.size());
    for (const StackedColumn &column : columns)
        envelope.emplace_back(column.range.beginNs, column.range.maxBytes);
    elements += "<path d=\"" + stepPath(frame, envelope) + "\" fill=\"none\" stroke=\"" + palette::hex(palette::kTotal)
                + "\" stroke-width=\"1\"/>";
    legend.push_back({"allocated", palette::kTotal, svg::LegendEntry::Mark::Line});
    if (!timeline.reserved.empty()) {
        std::vector<std::pair<std::int64_t, std::int64_t>> reserved;
        for (const ColumnRange &column : reduceToColumns(timeline.reserved, frame.beginNs, frame.endNs, columnCount))
            reserved.emplace_back(column.beginNs, column.maxBytes);
        elements += "<path d=\"" + stepPath(frame, reserved) + "\" fill=\"none\" stroke=\"" + palette::hex(palette::kReserved)
                    + "\" stroke-dasharray=\"5 3\"/>";
        legend.push_back({"reserved", palette::kReserved, svg::LegendEntry::Mark::DashedLine});
    }
    for (const Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
        if (shaded[static_cast<int>(phase)])
            legend.push_back(
                {std::string(phaseName(phase)) + " pass", palette::phaseColor(phase), svg::LegendEntry::Mark::FaintSwatch});
    }
    if (run.analysed->summary.peak.primary) {
        const DevicePeak &peak = run.analysed->summary.peak.devices[*run.analysed->summary.peak.primary];
        const double x = frame.x(peak.timeNs), y = frame.y(static_cast<double>(peak.allocatedBytes));
        const std::string color = palette::hex(palette::kPeak);
        elements += "<circle cx=\"" + number(x) + "\" cy=\"" + number(y) + "\" r=\"5\" fill=\"none\" stroke=\"" + color
                    + "\" stroke-width=\"2\"/>";
        const std::string label = "peak " + formatBytes(peak.allocatedBytes);
        // Beside the marker, on the side with room.
        const bool right = x + 8 + svg::textWidth(label) <= kWidth;
        elements += svg::text(right ? x + 8 : x - 8, y - 6, label, right ? "start" : "end",
                              "fill=\"" + color + "\" font-weight=\"bold\"");
    }
    const svg::Legend drawn = svg::legend(legend, frame.left, frame.bottom() + 26, frame.width);
    elements += drawn.elements;
    return SvgChart{kWidth, static_cast<int>(frame.bottom() + 26 + drawn.height + 4), "memory timeline", std::move(elements)};
}

std::optional<SvgChart> layerBarsChart(const ReportRun &run)
{
    std::vector<std::uint32_t> order;
    for (std::uint32_t l = 0; l < run.analysed->summary.layers.size(); ++l) {
        // Leaves only: containers repeat their children's bytes.
        bool leaf = true;
        for (const Layer &other : run.analysed->trace->layers)
            leaf = leaf && other.parent != l;
        if (leaf && run.analysed->summary.layers[l].activationBytes > 0)
            order.push_back(l);
    }
    if (order.empty())
        return std::nullopt;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return run.analysed->summary.layers[a].activationBytes > run.analysed->summary.layers[b].activationBytes;
    });
    order.resize(std::min<std::size_t>(order.size(), 16));
    const ChartAxis axis =
        bytesAxis(static_cast<double>(run.analysed->summary.layers[order.front()].activationBytes), kValueTicks);
    constexpr double kNameWidth = 220, kBarLeft = 232, kRowHeight = 20, kTop = 4;
    // Room after the longest bar for its label.
    constexpr double kBarRoom = kWidth - kBarLeft - 80;
    const double bottom = kTop + kRowHeight * static_cast<double>(order.size());
    std::string elements;
    for (std::size_t i = 0; i < axis.ticks.size(); ++i) {
        const double x = kBarLeft + kBarRoom * axis.ticks[i] / axis.end;
        elements += line(x, kTop, x, bottom + 4, i == 0 ? palette::kAxis : palette::kGrid);
        elements += svg::text(x, bottom + 17, axis.labels[i], "middle");
    }
    const std::string color = palette::hex(palette::categoryColor(Category::Activation));
    for (std::size_t i = 0; i < order.size(); ++i) {
        const LayerStats &stats = run.analysed->summary.layers[order[i]];
        const double y = kTop + static_cast<double>(i) * kRowHeight;
        const double width = kBarRoom * static_cast<double>(stats.activationBytes) / axis.end;
        elements +=
            svg::text(kBarLeft - 8, y + 14, svg::fitKeepingEnd(run.analysed->trace->layers[order[i]].path, kNameWidth), "end");
        elements += "<rect x=\"" + number(kBarLeft) + "\" y=\"" + number(y + 3) + "\" width=\"" + number(std::max(1.0, width))
                    + "\" height=\"14\" fill=\"" + color + "\"/>";
        elements += svg::text(kBarLeft + width + 6, y + 14, formatBytes(stats.activationBytes));
    }
    return SvgChart{kWidth, static_cast<int>(bottom + 24), "activations per layer", std::move(elements)};
}

std::optional<SvgChart> comparisonChart(const ReportData &data)
{
    const ReportRun &baseline = data.runs.front();
    if (!baseline.analysed->model)
        return std::nullopt;
    const CostModel &model = *baseline.analysed->model;
    struct Curve
    {
        std::string label;
        std::vector<SeriesPoint> points;
        palette::Rgb color = 0;
        bool dashed = false;
    };
    const Trace &baseTrace = *baseline.analysed->trace;
    // A run's step laid phase by phase on the baseline's, as the app draws it.
    const auto onBaselineClock = [&](const AnalysedTrace &run) {
        const auto alignment = alignSteps(*run.trace, baseTrace, model.step);
        return alignment ? alignedSeries(run.byCategory.allocated, *alignment) : std::vector<SeriesPoint>();
    };
    std::vector<Curve> curves;
    curves.push_back(
        {"baseline " + fileName(baseline.name) + ", measured", onBaselineClock(*baseline.analysed), palette::kTotal});
    // One run: the palette's prediction and measurement colours. More: a colour per run,
    // its prediction dashed.
    const bool single = data.comparisons.size() == 1;
    for (std::size_t i = 0; i < data.comparisons.size(); ++i) {
        const ReportComparison &comparison = data.comparisons[i];
        const ReportRun &run = data.runs[comparison.run];
        if (comparison.row) {
            Curve predicted{fileName(run.name) + ", predicted", {}, single ? palette::kPredicted : palette::seriesColor(i), true};
            for (const SeriesPoint &point : predictCurve(model, comparison.row->schedule))
                predicted.points.push_back({point.timeNs, point.bytes});
            curves.push_back(std::move(predicted));
        }
        curves.push_back({fileName(run.name) + ", measured", onBaselineClock(*run.analysed),
                          single ? palette::kMeasured : palette::seriesColor(i)});
    }
    PlotArea frame;
    frame.beginNs = model.stepBeginNs;
    frame.endNs = model.stepBeginNs + 1;
    double top = 1;
    for (const Curve &curve : curves) {
        for (const SeriesPoint &point : curve.points) {
            frame.endNs = std::max(frame.endNs, point.timeNs);
            top = std::max(top, static_cast<double>(point.bytes));
        }
    }
    const ChartAxis bytes = bytesAxis(top, kValueTicks);
    const ChartAxis time = timeAxis(static_cast<double>(frame.endNs - frame.beginNs), kTimeTicks);
    frame.maxBytes = bytes.end;
    std::string elements = axes(frame, bytes, time);
    std::vector<svg::LegendEntry> legend;
    for (const Curve &curve : curves) {
        std::vector<std::pair<std::int64_t, std::int64_t>> path;
        for (const ColumnRange &column :
             reduceToColumns(curve.points, frame.beginNs, frame.endNs, static_cast<int>(frame.width / 2)))
            path.emplace_back(column.beginNs, column.maxBytes);
        elements += "<path d=\"" + stepPath(frame, path) + "\" fill=\"none\" stroke=\"" + palette::hex(curve.color)
                    + "\" stroke-width=\"1.6\"" + (curve.dashed ? " stroke-dasharray=\"6 3\"" : "") + "/>";
        legend.push_back(
            {curve.label, curve.color, curve.dashed ? svg::LegendEntry::Mark::DashedLine : svg::LegendEntry::Mark::Line});
    }
    const svg::Legend drawn = svg::legend(legend, frame.left, frame.bottom() + 26, frame.width);
    elements += drawn.elements;
    return SvgChart{kWidth, static_cast<int>(frame.bottom() + 26 + drawn.height + 4), "runs compared", std::move(elements)};
}

} // namespace peaklens
