#include "htmlreport.h"

#include "core/analysis/allocationsites.h"

#include "core/analysis/levelofdetail.h"
#include "core/analysis/phasespans.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

namespace peaklens {

namespace {

constexpr const char *kStyle = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; margin: 2em auto; max-width: 1040px; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #d5d9e0; }
.muted { color: #5d6675; } .figure { font-size: 1.9em; font-weight: 600; }
.cards { display: flex; gap: 1.2em; flex-wrap: wrap; } .card { border: 1px solid #d5d9e0; border-radius: 6px; padding: 0.6em 1em; min-width: 12em; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e4e7ec; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; } code { font-size: 0.9em; word-break: break-all; }
svg { display: block; margin: 0.5em 0; } svg text { font: 11px system-ui, sans-serif; fill: #3a4252; }
.legend span { display: inline-block; margin-right: 1em; } .swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em; margin-right: 0.3em; }
.good { color: #1a7f37; } .bad { color: #b42318; }
@media print { body { margin: 0; max-width: none; font-size: 10pt; } section { break-inside: avoid; } h2 { break-after: avoid; } }
)";

const char *const kCategoryColors[] = {"#59a14f", "#f28e2b", "#edc948", "#76b7b2", "#4e79a7", "#e15759", "#b07aa1", "#9c9c9c"};

std::string number(double value, int decimals)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

// Where charts go: inline into the page, or aside with an <img> in their place.
class ChartSink
{
public:
    explicit ChartSink(std::vector<std::string> *aside)
        : m_aside(aside)
    {
    }
    // A chart of `width` x `height` pixels drawn by the SVG elements in `body`.
    std::string place(int width, int height, const std::string &label, const std::string &body)
    {
        const std::string size = "width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) + "\"";
        const std::string attributes = size + " viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height)
                                       + "\" role=\"img\" aria-label=\"" + escapeHtml(label) + "\"";
        if (!m_aside)
            return "<svg " + attributes + ">" + body + "</svg>";
        // A standalone SVG file needs its namespace; inline SVG in HTML does not.
        m_aside->push_back("<svg xmlns=\"http://www.w3.org/2000/svg\" " + attributes + ">" + body + "</svg>");
        return "<p><img src=\"chart:" + std::to_string(m_aside->size() - 1) + "\" width=\"" + std::to_string(width * 2 / 3)
               + "\" height=\"" + std::to_string(height * 2 / 3) + "\"/></p>";
    }

private:
    std::vector<std::string> *m_aside;
};

std::string ms(std::int64_t ns)
{
    return number(static_cast<double>(ns) / 1e6, 1) + " ms";
}

std::string percentChange(double value, double base)
{
    if (base == 0)
        return "";
    const double percent = 100.0 * (value - base) / base;
    return (percent >= 0 ? "+" : "") + number(percent, 1) + "\xc2\xa0%"; // no break before the sign
}

// Maps time and bytes into a chart's plot area.
struct Frame
{
    double left = 70, top = 12, width = 860, height = 220;
    std::int64_t beginNs = 0, endNs = 1;
    double maxBytes = 1;

    double x(std::int64_t ns) const
    {
        return left + width * static_cast<double>(ns - beginNs) / static_cast<double>(std::max<std::int64_t>(1, endNs - beginNs));
    }
    double y(double bytes) const { return top + height * (1.0 - bytes / maxBytes); }
};

// A step function as an SVG path (each value holds until the next point).
std::string stepPath(const Frame &frame, const std::vector<std::pair<std::int64_t, std::int64_t>> &points)
{
    std::string d;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const std::string x = number(frame.x(points[i].first), 1), y = number(frame.y(static_cast<double>(points[i].second)), 1);
        d += i == 0 ? "M" + x + " " + y : " H" + x + " V" + y;
    }
    return d;
}

std::string axes(const Frame &frame)
{
    std::string out;
    for (int i = 0; i <= 4; ++i) {
        const double bytes = frame.maxBytes * i / 4;
        const std::string y = number(frame.y(bytes), 1);
        out += "<line x1=\"" + number(frame.left, 1) + "\" x2=\"" + number(frame.left + frame.width, 1) + "\" y1=\"" + y
               + "\" y2=\"" + y + "\" stroke=\"#e4e7ec\"/>";
        out += "<text x=\"" + number(frame.left - 6, 1) + "\" y=\"" + y + "\" text-anchor=\"end\" dominant-baseline=\"middle\">"
               + escapeHtml(formatBytes(static_cast<std::int64_t>(bytes))) + "</text>";
    }
    for (int i = 0; i <= 5; ++i) {
        const std::int64_t ns = frame.beginNs + (frame.endNs - frame.beginNs) * i / 5;
        out += "<text x=\"" + number(frame.x(ns), 1) + "\" y=\"" + number(frame.top + frame.height + 16, 1)
               + "\" text-anchor=\"middle\">" + escapeHtml(ms(ns - frame.beginNs)) + "</text>";
    }
    return out;
}

std::string timelineChart(const ReportRun &run, ChartSink &charts)
{
    const TimelineSeries &timeline = run.timeline;
    if (timeline.allocated.empty())
        return "<p class=\"muted\">The trace allocates nothing.</p>";
    Frame frame;
    frame.beginNs = timeline.allocated.front().timeNs;
    frame.endNs = std::max(timeline.allocated.back().timeNs, frame.beginNs + 1);
    std::int64_t top = 0;
    for (const SeriesPoint &point : timeline.allocated)
        top = std::max(top, point.bytes);
    for (const SeriesPoint &point : timeline.reserved)
        top = std::max(top, point.bytes);
    frame.maxBytes = std::max(1.0, static_cast<double>(top) * 1.1);
    constexpr int kColumns = 430; // two pixels per column
    const auto columns = reduceToColumns(timeline.allocated, frame.beginNs, frame.endNs, kColumns);

    std::string svg;
    // Phase shading, when there are few enough steps to see it.
    if (run.trace->steps.size() <= 200) {
        for (const PhaseSpan &span : phaseSpans(*run.trace)) {
            const char *color = span.phase == Phase::Forward ? "#dbe7fb" : span.phase == Phase::Backward ? "#fbe3d6" : "#dff0da";
            svg += "<rect x=\"" + number(frame.x(span.beginNs), 1) + "\" y=\"" + number(frame.top, 1) + "\" width=\""
                   + number(std::max(0.5, frame.x(span.endNs) - frame.x(span.beginNs)), 1) + "\" height=\""
                   + number(frame.height, 1) + "\" fill=\"" + color + "\"/>";
        }
    }
    svg += axes(frame);
    // Stacked categories, as they stood where each column reached its highest point.
    const std::size_t shown = std::min<std::size_t>(timeline.groups.size(), 7);
    std::vector<std::int64_t> below(columns.size(), 0);
    for (std::size_t g = 0; g < shown; ++g) {
        const GroupSeries &group = timeline.groups[g];
        std::string upper, lower;
        std::vector<std::int64_t> above(columns.size());
        for (std::size_t c = 0; c < columns.size(); ++c) {
            above[c] = below[c] + valueAt(group.points, columns[c].maxTimeNs);
            const std::string x0 = number(frame.x(columns[c].beginNs), 1);
            const std::string x1 = number(frame.x(c + 1 < columns.size() ? columns[c + 1].beginNs : frame.endNs), 1);
            upper += x0 + "," + number(frame.y(static_cast<double>(above[c])), 1) + " " + x1 + ","
                     + number(frame.y(static_cast<double>(above[c])), 1) + " ";
        }
        for (std::size_t c = columns.size(); c-- > 0;) {
            const std::string x0 = number(frame.x(columns[c].beginNs), 1);
            const std::string x1 = number(frame.x(c + 1 < columns.size() ? columns[c + 1].beginNs : frame.endNs), 1);
            lower += x1 + "," + number(frame.y(static_cast<double>(below[c])), 1) + " " + x0 + ","
                     + number(frame.y(static_cast<double>(below[c])), 1) + " ";
        }
        svg += "<polygon points=\"" + upper + lower + "\" fill=\"" + kCategoryColors[group.key % 8] + "\" fill-opacity=\"0.8\"/>";
        below = std::move(above);
    }
    // The envelope: each column's lowest and highest value.
    std::vector<std::pair<std::int64_t, std::int64_t>> envelope;
    for (const ColumnRange &column : columns) {
        envelope.emplace_back(column.beginNs, column.minBytes);
        envelope.emplace_back(column.beginNs, column.maxBytes);
    }
    svg += "<path d=\"" + stepPath(frame, envelope) + "\" fill=\"none\" stroke=\"#1d2330\" stroke-width=\"1.2\"/>";
    if (!timeline.reserved.empty()) {
        std::vector<std::pair<std::int64_t, std::int64_t>> reserved;
        for (const ColumnRange &column : reduceToColumns(timeline.reserved, frame.beginNs, frame.endNs, kColumns))
            reserved.emplace_back(column.beginNs, column.maxBytes);
        svg += "<path d=\"" + stepPath(frame, reserved) + "\" fill=\"none\" stroke=\"#5d6675\" stroke-dasharray=\"5 3\"/>";
    }
    if (run.summary.peak.primary) {
        const DevicePeak &peak = run.summary.peak.devices[*run.summary.peak.primary];
        const double x = frame.x(peak.timeNs), y = frame.y(static_cast<double>(peak.allocatedBytes));
        svg += "<circle cx=\"" + number(x, 1) + "\" cy=\"" + number(y, 1) + "\" r=\"5\" fill=\"none\" stroke=\"#b42318\" stroke-width=\"2\"/>";
        svg += "<text x=\"" + number(x + 8, 1) + "\" y=\"" + number(y - 6, 1) + "\" style=\"fill:#b42318;font-weight:600\">peak "
               + escapeHtml(formatBytes(peak.allocatedBytes)) + "</text>";
    }
    svg = charts.place(960, 270, "memory timeline", svg);

    std::string legend = "<p class=\"legend\">";
    for (std::size_t g = 0; g < shown; ++g) {
        std::string label = timeline.groups[g].label;
        std::replace(label.begin(), label.end(), '_', ' ');
        legend += "<span><span class=\"swatch\" style=\"background:" + std::string(kCategoryColors[timeline.groups[g].key % 8])
                  + "\"></span>" + escapeHtml(label) + "</span> &#160; ";
    }
    legend += "<span>— allocated (range per column)</span> &#160; ";
    if (!timeline.reserved.empty())
        legend += "<span>- - reserved</span> &#160; ";
    legend += "<br/><span class=\"muted\">shading: forward blue, backward orange, optimizer green</span></p>";
    return svg + legend;
}

std::string layerBars(const ReportRun &run, ChartSink &charts)
{
    std::vector<std::uint32_t> order;
    for (std::uint32_t l = 0; l < run.summary.layers.size(); ++l) {
        // Leaves only: containers repeat their children's bytes.
        bool leaf = true;
        for (const Layer &other : run.trace->layers)
            leaf = leaf && other.parent != l;
        if (leaf && run.summary.layers[l].activationBytes > 0)
            order.push_back(l);
    }
    if (order.empty())
        return "<p class=\"muted\">No layer keeps activations for the backward pass (the trace has no forward ranges).</p>";
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return run.summary.layers[a].activationBytes > run.summary.layers[b].activationBytes;
    });
    order.resize(std::min<std::size_t>(order.size(), 16));
    const double most = static_cast<double>(run.summary.layers[order.front()].activationBytes);
    const int rowHeight = 20;
    std::string svg;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const LayerStats &stats = run.summary.layers[order[i]];
        const double y = 4 + static_cast<double>(i * rowHeight);
        const double width = 560.0 * static_cast<double>(stats.activationBytes) / most;
        svg += "<text x=\"236\" y=\"" + number(y + 13, 1) + "\" text-anchor=\"end\">" + escapeHtml(run.trace->layers[order[i]].path) + "</text>";
        svg += "<rect x=\"244\" y=\"" + number(y + 2, 1) + "\" width=\"" + number(std::max(1.0, width), 1)
               + "\" height=\"14\" fill=\"#4e79a7\"/>";
        svg += "<text x=\"" + number(250 + width, 1) + "\" y=\"" + number(y + 13, 1) + "\">"
               + escapeHtml(formatBytes(stats.activationBytes)) + "</text>";
    }
    return charts.place(960, static_cast<int>(rowHeight * order.size() + 8), "activations per layer", svg);
}

std::string metaTable(const ReportRun &run)
{
    const Trace &trace = *run.trace;
    std::string rows;
    auto row = [&rows](const std::string &name, const std::string &value) {
        if (!value.empty())
            rows += "<tr><th>" + escapeHtml(name) + "</th><td><code>" + escapeHtml(value) + "</code></td></tr>";
    };
    row("file", run.path);
    row("source", trace.metaValue(metakey::SourceFormat));
    row("description", trace.metaValue(metakey::Description));
    std::string devices;
    for (const Device &device : trace.devices())
        devices += (devices.empty() ? "" : ", ") + device.toString();
    row("device", devices + (trace.metaValue(metakey::DeviceName).empty() ? "" : " (" + trace.metaValue(metakey::DeviceName) + ")"));
    row("command", trace.metaValue(metakey::Command));
    row("replay spec", trace.metaValue(metakey::ReplaySpec));
    row("replay options", trace.metaValue(metakey::ReplayOptions));
    std::string toggles;
    for (const std::string &path : run.checkpoint)
        toggles += (toggles.empty() ? "" : ", ") + path;
    row("checkpointed", toggles.empty() ? "nothing" : toggles);
    row("events", std::to_string(trace.events.size()) + " memory events, " + std::to_string(trace.steps.size()) + " steps, "
                      + std::to_string(trace.layers.size()) + " layers");
    row("created by", trace.metaValue(metakey::CreatedBy));
    return "<table>" + rows + "</table>";
}

std::string peakCards(const ReportRun &run)
{
    if (!run.summary.peak.primary)
        return "<p class=\"muted\">The trace allocates nothing.</p>";
    const DevicePeak &peak = run.summary.peak.devices[*run.summary.peak.primary];
    std::string where = std::string(phaseName(run.summary.peakPhase));
    if (run.summary.peakLayer < run.trace->layers.size())
        where += " of " + run.trace->layers[run.summary.peakLayer].path;
    if (run.summary.peakStep)
        where += ", step " + std::to_string(*run.summary.peakStep);
    std::string out = "<div class=\"cards\">";
    out += "<div class=\"card\"><div class=\"muted\">Peak allocated</div><div class=\"figure\" id=\"peak\">"
           + escapeHtml(formatBytes(peak.allocatedBytes)) + "</div><div>" + escapeHtml(where) + " on "
           + escapeHtml(peak.device.toString()) + "</div></div>";
    out += "<div class=\"card\"><div class=\"muted\">Peak reserved</div><div class=\"figure\">"
           + (peak.reservedBytes ? escapeHtml(formatBytes(*peak.reservedBytes)) : std::string("—")) + "</div><div>"
           + (peak.reservedBytes ? std::string("segments of the caching allocator") : std::string("no segment events")) + "</div></div>";
    out += "<div class=\"card\"><div class=\"muted\">Step time</div><div class=\"figure\">" + escapeHtml(ms(run.stepTimeNs))
           + "</div><div>" + (run.model ? "median of the trace's steps" : "the whole trace") + "</div></div>";
    return out + "</div>";
}

std::string liveTables(const ReportRun &run)
{
    if (!run.summary.peak.liveAtPeak)
        return "";
    const LiveSet &live = *run.summary.peak.liveAtPeak;
    auto table = [&](const std::vector<LiveGroup> &groups, const std::string &what, auto name) {
        std::string out = "<table><tr><th>" + what + "</th><th class=\"n\">live</th><th class=\"n\">share</th><th class=\"n\">blocks</th></tr>";
        for (std::size_t i = 0; i < groups.size() && i < 12; ++i) {
            out += "<tr><td>" + escapeHtml(name(groups[i].key)) + "</td><td class=\"n\">" + escapeHtml(formatBytes(groups[i].bytes))
                   + "</td><td class=\"n\">"
                   + number(live.bytes ? 100.0 * static_cast<double>(groups[i].bytes) / static_cast<double>(live.bytes) : 0, 1)
                   + " %</td><td class=\"n\">" + std::to_string(groups[i].blocks) + "</td></tr>";
        }
        return out + "</table>";
    };
    const Trace &trace = *run.trace;
    std::string out = "<p>" + escapeHtml(formatBytes(live.bytes)) + " in " + std::to_string(live.allocations.size()) + " blocks.</p>"
           + "<div class=\"cards\"><div>"
           + table(live.byCategory, "category", [](std::uint32_t key) { return std::string(categoryName(static_cast<Category>(key))); })
           + "</div><div>"
           + table(live.byLayer, "layer", [&trace](std::uint32_t key) { return key < trace.layers.size() ? trace.layers[key].path : std::string("(no layer)"); })
           + "</div></div>";
    if (live.bySite.empty() || (live.bySite.size() == 1 && live.bySite.front().key == AllocationSites::kNoSite))
        return out;
    // Sites by the user's code, each with who called it.
    const AllocationSites sites(trace.stacks);
    std::map<std::uint32_t, std::string> callers;
    for (const LiveGroup &group : live.bySite) {
        std::string chain;
        for (const std::string &caller : sites.callers(group.largestStack, 2))
            chain += (chain.empty() ? "called from " : " ← ") + caller;
        callers[group.key] = chain;
    }
    return out + "<h3>Allocated at</h3>" + table(live.bySite, "site", [&](std::uint32_t key) {
               return sites.label(key) + (callers[key].empty() ? "" : " — " + callers[key]);
           });
}

std::string planTable(const ReportRun &run)
{
    if (!run.model)
        return "<p class=\"muted\">No what-if: " + escapeHtml(run.modelProblem) + "</p>";
    const Prediction baseline = predict(*run.model, CheckpointSchedule{});
    std::string out = "<table width=\"100%\"><tr><th>strategy</th><th>checkpointed</th><th class=\"n\">predicted peak</th><th class=\"n\">change</th>"
                      "<th class=\"n\">predicted step</th><th class=\"n\">change</th></tr>";
    for (const ReportPlan &plan : run.plans) {
        const std::vector<std::string> paths = checkpointedPaths(*run.model, plan.plan.checkpoint);
        std::string layers;
        for (const std::string &path : paths)
            layers += (layers.empty() ? "" : ", ") + path;
        const std::size_t count = paths.size();
        out += "<tr><td>" + escapeHtml(plan.name) + (plan.plan.feasible ? "" : " (cannot be met; lowest peak shown)") + "</td><td title=\""
               + escapeHtml(layers) + "\">" + (count == 0 ? std::string("nothing") : std::to_string(count) + " of " + std::to_string(run.model->layers.size()))
               + "</td><td class=\"n\">" + escapeHtml(formatBytes(plan.plan.prediction.peakBytes)) + "</td><td class=\"n good\">"
               + percentChange(static_cast<double>(plan.plan.prediction.peakBytes), static_cast<double>(baseline.peakBytes))
               + "</td><td class=\"n\">" + escapeHtml(ms(plan.plan.prediction.stepTimeNs)) + "</td><td class=\"n bad\">"
               + percentChange(static_cast<double>(plan.plan.prediction.stepTimeNs), static_cast<double>(baseline.stepTimeNs)) + "</td></tr>";
    }
    return out + "</table><p class=\"muted\">Chain: " + std::to_string(run.model->layers.size())
           + " layers. The model behind the predictions is described in docs/planning.md.</p>";
}

// The baseline's step, each run's prediction (dashed) and each run's measured step (solid),
// on one clock.
std::string comparisonChart(const ReportData &data, ChartSink &charts)
{
    const ReportRun &baseline = data.runs.front();
    if (!baseline.model)
        return "";
    const CostModel &model = *baseline.model;
    struct Curve
    {
        std::string label;
        std::vector<SeriesPoint> points;
        std::string color;
        bool dashed = false;
    };
    const char *const colors[] = {"#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2b", "#76b7b2"};
    std::vector<Curve> curves;
    curves.push_back({"baseline, measured",
                      alignedStep(*baseline.trace, baseline.timeline.allocated, model.step, model.stepBeginNs), "#1d2330"});
    for (std::size_t i = 0; i < data.comparisons.size(); ++i) {
        const ReportComparison &comparison = data.comparisons[i];
        const ReportRun &run = data.runs[comparison.run];
        const std::string color = colors[i % std::size(colors)];
        if (comparison.predicted) {
            Curve predicted{escapeHtml(run.path) + ", predicted", {}, color, true};
            for (const PredictedPoint &point : predictCurve(model, comparison.toggles))
                predicted.points.push_back({point.timeNs, point.bytes});
            curves.push_back(std::move(predicted));
        }
        curves.push_back({escapeHtml(run.path) + ", measured",
                          alignedStep(*run.trace, run.timeline.allocated, model.step, model.stepBeginNs), color});
    }
    Frame frame;
    frame.beginNs = model.stepBeginNs;
    frame.endNs = model.stepBeginNs + 1;
    double top = 1;
    for (const Curve &curve : curves) {
        for (const SeriesPoint &point : curve.points) {
            frame.endNs = std::max(frame.endNs, point.timeNs);
            top = std::max(top, static_cast<double>(point.bytes));
        }
    }
    frame.maxBytes = top * 1.1;
    std::string svg = axes(frame);
    std::string legend = "<p class=\"legend\">";
    for (const Curve &curve : curves) {
        std::vector<std::pair<std::int64_t, std::int64_t>> path;
        for (const ColumnRange &column : reduceToColumns(curve.points, frame.beginNs, frame.endNs, 430))
            path.emplace_back(column.beginNs, column.maxBytes);
        svg += "<path d=\"" + stepPath(frame, path) + "\" fill=\"none\" stroke=\"" + curve.color + "\" stroke-width=\"1.6\""
               + (curve.dashed ? " stroke-dasharray=\"6 3\"" : "") + "/>";
        legend += "<span><span class=\"swatch\" style=\"background:" + curve.color + "\"></span>" + curve.label
                  + (curve.dashed ? " (dashed)" : "") + "</span> &#160; ";
    }
    return charts.place(960, 270, "runs compared", svg) + legend + "</p>";
}

std::string comparisonTable(const ReportData &data)
{
    const ReportRun &baseline = data.runs.front();
    std::string out = "<table width=\"100%\"><tr><th>run</th><th>checkpointed</th><th class=\"n\">predicted peak</th><th class=\"n\">measured peak</th>"
                      "<th class=\"n\">error</th><th class=\"n\">predicted step</th><th class=\"n\">measured step</th><th class=\"n\">error</th></tr>";
    const auto fileName = [](const std::string &path) { return std::filesystem::path(path).filename().string(); };
    out += "<tr><td>baseline: " + escapeHtml(fileName(baseline.path)) + "</td><td>" + std::to_string(baseline.checkpoint.size())
           + " layers</td><td class=\"n\"></td><td class=\"n\">" + escapeHtml(formatBytes(baseline.peakBytes))
           + "</td><td></td><td></td><td class=\"n\">" + escapeHtml(ms(baseline.stepTimeNs)) + "</td><td></td></tr>";
    for (const ReportComparison &comparison : data.comparisons) {
        const ReportRun &run = data.runs[comparison.run];
        out += "<tr><td>" + escapeHtml(fileName(run.path)) + "</td><td>" + std::to_string(run.checkpoint.size()) + " layers</td>";
        if (comparison.predicted) {
            out += "<td class=\"n\">" + escapeHtml(formatBytes(comparison.predicted->peakBytes)) + "</td><td class=\"n\">"
                   + escapeHtml(formatBytes(run.peakBytes)) + "</td><td class=\"n\">"
                   + percentChange(static_cast<double>(comparison.predicted->peakBytes), static_cast<double>(run.peakBytes))
                   + "</td><td class=\"n\">" + escapeHtml(ms(comparison.predicted->stepTimeNs)) + "</td><td class=\"n\">"
                   + escapeHtml(ms(run.stepTimeNs)) + "</td><td class=\"n\">"
                   + percentChange(static_cast<double>(comparison.predicted->stepTimeNs), static_cast<double>(run.stepTimeNs)) + "</td>";
        } else {
            out += "<td class=\"muted\" colspan=\"6\">measured " + escapeHtml(formatBytes(run.peakBytes)) + ", " + escapeHtml(ms(run.stepTimeNs))
                   + "; no prediction: " + escapeHtml(comparison.problem) + "</td>";
        }
        out += "</tr>";
    }
    return out + "</table>";
}

} // namespace

std::string escapeHtml(std::string_view text)
{
    // Control, bidirectional and invisible characters written out: they are not allowed in
    // XML, and a hostile name must neither break the file nor display as something else.
    const std::string shown = visibleText(text);
    std::string out;
    out.reserve(shown.size());
    for (char c : shown) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

namespace {

std::string render(const ReportData &data, ChartSink &charts)
{
    std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>PeakLens report — "
                       + escapeHtml(data.runs.empty() ? std::string() : data.runs.front().path)
                       + "</title><style>" + kStyle + "</style></head><body>";
    for (std::size_t i = 0; i < data.runs.size(); ++i) {
        const ReportRun &run = data.runs[i];
        if (i > 0 && data.runs.size() > 1 && i == 1)
            html += "<h1>Runs compared with the baseline</h1><section><h2>Predicted against measured</h2>" + comparisonTable(data)
                    + comparisonChart(data, charts)
                    + "<p class=\"muted\">Predictions come from the baseline's trace and each run's checkpointed layers; "
                      "measured figures from the run's own trace.</p></section>";
        html += i == 0 ? "<h1>PeakLens memory report</h1>" : "<h1>Run: " + escapeHtml(run.path) + "</h1>";
        html += "<p class=\"muted\">" + escapeHtml(run.path) + " · peaklens " + PEAKLENS_VERSION + "</p>";
        html += "<section><h2>Peak</h2>" + peakCards(run) + "</section>";
        html += "<section><h2>Memory over time</h2>" + timelineChart(run, charts) + "</section>";
        html += "<section><h2>Activations kept for the backward pass, by layer</h2>" + layerBars(run, charts) + "</section>";
        html += "<section><h2>Live at the peak</h2>" + liveTables(run) + "</section>";
        html += "<section><h2>What checkpointing would do</h2>" + planTable(run) + "</section>";
        html += "<section><h2>The trace</h2>" + metaTable(run) + "</section>";
    }
    return html + "</body></html>\n";
}

} // namespace

std::string renderHtmlReport(const ReportData &data)
{
    ChartSink inline_(nullptr);
    return render(data, inline_);
}

HtmlWithCharts renderHtmlReportWithChartImages(const ReportData &data)
{
    HtmlWithCharts out;
    ChartSink aside(&out.charts);
    out.html = render(data, aside);
    return out;
}

} // namespace peaklens
