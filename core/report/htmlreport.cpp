// SPDX-License-Identifier: Apache-2.0
#include "htmlreport.h"

#include "core/analysis/allocatorstate.h"
#include "core/plan/plannotes.h"

#include "flamegraphsvg.h"
#include "palette.h"
#include "reportcharts.h"
#include "svgdrawing.h"

#include "core/analysis/allocationsites.h"
#include "core/plan/steptimecomparison.h"
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
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e4e7ec; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; } code { font-size: 0.9em; word-break: break-all; }
th { white-space: nowrap; vertical-align: bottom; } th.group { text-align: center; border-bottom: 1px solid #d5d9e0; }
table.cards { border-collapse: separate; border-spacing: 0.8em 0; margin: 0 -0.8em; }
td.card { border: 1px solid #d5d9e0; border-radius: 6px; padding: 0.6em 1em; vertical-align: top; }
.column { display: inline-block; vertical-align: top; margin-right: 2em; max-width: 100%; } th.key { vertical-align: top; }
td { overflow-wrap: anywhere; }
svg { display: block; margin: 0.5em 0; max-width: 100%; height: auto; }
.good { color: #1a7f37; } .bad { color: #b42318; }
@media print { body { margin: 0; max-width: none; font-size: 10pt; } section { break-inside: avoid; } h2 { break-after: avoid; } }
)";

// For Qt's rich text, which lays out the PDF on a page narrower than a screen: it gives a
// table's columns no less than their longest word, and when they do not fit it breaks
// every cell anywhere, mid-word. Smaller table text and padding let the widest table (the
// comparison's seven columns) keep whole words.
constexpr const char *kPrintStyle = R"(
table { font-size: 12px; } th, td { padding: 3px 6px; }
table.cards { font-size: 14px; } td.card { padding: 6px 10px; } .figure { font-size: 24px; }
)";

// A layer path may break after each of its dots and slashes, so that a long one wraps in
// its column rather than pushing the table past the page.
std::string breakable(const std::string &html)
{
    std::string out;
    out.reserve(html.size() + html.size() / 8);
    for (const char c : html) {
        out += c;
        if (c == '.' || c == '/')
            out += "<wbr/>";
    }
    return out;
}

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
    // The width of the PDF's text: A4 less 15 mm margins, at the 96 dpi it is laid out at.
    static constexpr int kPrintWidth = 680;

    explicit ChartSink(std::vector<std::string> *aside)
        : m_aside(aside)
    {
    }
    bool isAside() const { return m_aside != nullptr; }

    std::string place(const SvgChart &chart)
    {
        const std::string size = "width=\"" + std::to_string(chart.width) + "\" height=\"" + std::to_string(chart.height) + "\"";
        const std::string attributes = size + " viewBox=\"0 0 " + std::to_string(chart.width) + " " + std::to_string(chart.height)
                                       + "\" role=\"img\" aria-label=\"" + escapeHtml(chart.label) + "\"";
        // The font on the chart itself: a renderer of the SVG alone sees no stylesheet.
        const std::string body = "<g font-family=\"system-ui, sans-serif\" font-size=\"" + svg::number(svg::kFontSize)
                                 + "\" fill=\"" + palette::hex(svg::kText) + "\">" + chart.elements + "</g>";
        if (!m_aside)
            return "<svg " + attributes + ">" + body + "</svg>";
        // A standalone SVG file needs its namespace; inline SVG in HTML does not.
        m_aside->push_back("<svg xmlns=\"http://www.w3.org/2000/svg\" " + attributes + ">" + body + "</svg>");
        const int width = std::min(chart.width, kPrintWidth);
        const int height = chart.height * width / chart.width;
        return "<p><img src=\"chart:" + std::to_string(m_aside->size() - 1) + "\" width=\"" + std::to_string(width)
               + "\" height=\"" + std::to_string(height) + "\"/></p>";
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

std::string metaTable(const ReportRun &run)
{
    const Trace &trace = *run.analysed->trace;
    std::string rows;
    auto row = [&rows](const std::string &name, const std::string &value) {
        if (!value.empty())
            rows += "<tr><th class=\"key\">" + escapeHtml(name) + "</th><td><code>" + escapeHtml(value) + "</code></td></tr>";
    };
    row("file", run.name);
    row("source", trace.metaValue(metakey::SourceFormat));
    row("description", trace.metaValue(metakey::Description));
    std::string devices;
    for (const Device &device : trace.devices())
        devices += (devices.empty() ? "" : ", ") + device.toString();
    row("device",
        devices + (trace.metaValue(metakey::DeviceName).empty() ? "" : " (" + trace.metaValue(metakey::DeviceName) + ")"));
    row("command", trace.metaValue(metakey::Command));
    row("replay spec", trace.metaValue(metakey::ReplaySpec));
    row("replay options", trace.metaValue(metakey::ReplayOptions));
    std::string toggles;
    for (const std::string &path : run.analysed->checkpoint)
        toggles += (toggles.empty() ? "" : ", ") + path;
    row("checkpointed", toggles.empty() ? "nothing" : toggles);
    row("events", std::to_string(trace.events.size()) + " memory events, " + std::to_string(trace.steps.size()) + " steps, "
                      + std::to_string(trace.layers.size()) + " layers");
    row("window", trace.metaValue(metakey::Window)); // of a bigger file: which of its events
    row("created by", trace.metaValue(metakey::CreatedBy));
    return "<table>" + rows + "</table>";
}

std::string peakCards(const ReportRun &run)
{
    if (!run.analysed->summary.peak.primary)
        return "<p class=\"muted\">The trace allocates nothing.</p>";
    const DevicePeak &peak = run.analysed->summary.peak.devices[*run.analysed->summary.peak.primary];
    const bool stateOnly = isStateOnly(*run.analysed->trace);
    std::string where = stateOnly ? std::string("at dump time") : std::string(phaseName(run.analysed->summary.peakPhase));
    if (run.analysed->summary.peakLayer < run.analysed->trace->layers.size())
        where += " of " + run.analysed->trace->layers[run.analysed->summary.peakLayer].path;
    if (run.analysed->summary.peakStep)
        where += ", step " + std::to_string(*run.analysed->summary.peakStep);
    // A table rather than boxes that flow: Qt's rich text (the PDF) lays out no flex box.
    std::string out = "<table class=\"cards\" width=\"100%\"><tr>";
    out += "<td class=\"card\" width=\"40%\"><div class=\"muted\">Peak allocated</div><div class=\"figure\" id=\"peak\">"
           + escapeHtml(formatBytes(peak.allocatedBytes)) + "</div><div>" + escapeHtml(where) + " on "
           + escapeHtml(peak.device.toString()) + "</div><div class=\"muted\" id=\"counting\">"
           + escapeHtml(peakCountingNote(*run.analysed->trace, run.analysed->summary.peak.liveAtPeak)) + "</div></td>";
    out += "<td class=\"card\" width=\"30%\"><div class=\"muted\">Peak reserved</div><div class=\"figure\">"
           + (peak.reservedBytes ? escapeHtml(formatBytes(*peak.reservedBytes)) : std::string("—")) + "</div><div>"
           + (peak.reservedBytes ? std::string("segments of the caching allocator") : std::string("no segment events"))
           + "</div></td>";
    out += "<td class=\"card\" width=\"30%\"><div class=\"muted\">Step time</div><div class=\"figure\">"
           + (stateOnly ? std::string("—") : escapeHtml(ms(run.analysed->summary.stepTimeNs))) + "</div><div>"
           + (stateOnly             ? "no history was recorded"
              : run.analysed->model ? "median of the trace's steps"
                                    : "the whole trace")
           + "</div></td>";
    return out + "</tr></table>";
}

std::string liveTables(const ReportRun &run)
{
    if (!run.analysed->summary.peak.liveAtPeak)
        return "";
    const LiveSet &live = *run.analysed->summary.peak.liveAtPeak;
    // Layer paths may break after their dots (a long one wraps rather than widen the table).
    auto table = [&](const std::vector<LiveGroup> &groups, const std::string &what, auto name, bool paths = false) {
        std::string out = "<table><thead><tr><th>" + what
                          + "</th><th class=\"n\">live</th><th class=\"n\">share</th><th class=\"n\">blocks</th></tr></thead>";
        for (std::size_t i = 0; i < groups.size() && i < 12; ++i) {
            const std::string cell = escapeHtml(name(groups[i].key));
            out += "<tr><td>" + (paths ? breakable(cell) : cell) + "</td><td class=\"n\">"
                   + escapeHtml(formatBytes(groups[i].bytes)) + "</td><td class=\"n\">"
                   + number(live.bytes ? 100.0 * static_cast<double>(groups[i].bytes) / static_cast<double>(live.bytes) : 0, 1)
                   + " %</td><td class=\"n\">" + std::to_string(groups[i].blocks) + "</td></tr>";
        }
        return out + "</table>";
    };
    const Trace &trace = *run.analysed->trace;
    std::string out = "<p>" + escapeHtml(formatBytes(live.bytes)) + " in " + std::to_string(live.allocations.size())
                      + " blocks.</p>" + "<div><div class=\"column\">"
                      + table(live.byCategory, "category",
                              [](std::uint32_t key) {
                                  return key < static_cast<std::uint32_t>(kCategoryCount)
                                             ? std::string(palette::categoryLabel(static_cast<Category>(key)))
                                             : std::string("(unknown)");
                              })
                      + "</div><div class=\"column\">"
                      + table(
                          live.byLayer, "layer",
                          [&trace](std::uint32_t key) {
                              return key < trace.layers.size() ? trace.layers[key].path : std::string("(no layer)");
                          },
                          true)
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

// What is live at the peak as flame graphs: by call stack, and by module when the trace
// has layers. Static SVG: each box's <title> names it in full with its bytes.
std::string flameGraphs(const ReportRun &run, ChartSink &charts)
{
    if (!run.analysed->summary.peak.liveAtPeak)
        return "";
    const Trace &trace = *run.analysed->trace;
    const LiveSet &live = *run.analysed->summary.peak.liveAtPeak;
    std::string out;
    const auto add = [&](FlameKeying keying, const std::string &heading, const std::string &label) {
        const FlameGraph graph = buildFlameGraph(trace, live, FlameGraphOptions{keying, false});
        if (const auto chart = flameGraphChart(graph, label))
            out += "<h3 class=\"flamegraph\">" + escapeHtml(heading) + "</h3>" + charts.place(*chart);
    };
    add(FlameKeying::Stack, "Flame graph by call stack", "live memory at the peak by call stack");
    if (!trace.layers.empty())
        add(FlameKeying::Module, "Flame graph by module", "live memory at the peak by module");
    if (out.empty())
        return out;
    return out
           + "<p class=\"muted\">A box's width is the memory live at the peak that was allocated under it: a caller "
             "above its callees, a module above its children. Frames of the allocator, the dispatcher, the interpreter "
             "and the system are folded into their callers. Point at a box for its full name and bytes.</p>";
}

std::string planTable(const ReportRun &run)
{
    if (!run.analysed->model)
        return "<p class=\"muted\">No what-if: " + escapeHtml(run.analysed->modelProblem) + "</p>";
    const Prediction baseline = predict(*run.analysed->model, CheckpointSchedule{});
    // Headers of one word each under a group's name: a header never has to break inside a
    // word to fit a narrow column (the PDF's page is narrower than a screen).
    // A <thead> repeats on each page a table runs over, in print and in the PDF.
    std::string out = "<table width=\"100%\"><thead><tr><th rowspan=\"2\">strategy</th><th rowspan=\"2\">checkpointed</th>"
                      "<th class=\"group\" colspan=\"2\">peak</th><th class=\"group\" colspan=\"2\">step time</th></tr>"
                      "<tr><th class=\"n\">predicted</th><th class=\"n\">change</th><th class=\"n\">predicted</th><th "
                      "class=\"n\">change</th></tr></thead>";
    for (const ReportPlan &plan : run.plans) {
        const std::vector<std::string> paths = checkpointedPaths(*run.analysed->model, plan.plan.checkpoint);
        std::string layers;
        for (const std::string &path : paths)
            layers += (layers.empty() ? "" : ", ") + path;
        const std::size_t count = paths.size();
        out += "<tr><td>" + escapeHtml(plan.name) + (plan.plan.feasible ? "" : " (cannot be met; lowest peak shown)")
               + "</td><td title=\"" + escapeHtml(layers) + "\">"
               + (count == 0 ? std::string("nothing")
                             : std::to_string(count) + " of " + std::to_string(run.analysed->model->layers.size()))
               + "</td><td class=\"n\">" + escapeHtml(formatBytes(plan.plan.prediction.peakBytes)) + "</td><td class=\"n good\">"
               + percentChange(static_cast<double>(plan.plan.prediction.peakBytes), static_cast<double>(baseline.peakBytes))
               + "</td><td class=\"n\">" + escapeHtml(ms(plan.plan.prediction.stepTimeNs)) + "</td><td class=\"n bad\">"
               + percentChange(static_cast<double>(plan.plan.prediction.stepTimeNs), static_cast<double>(baseline.stepTimeNs))
               + "</td></tr>";
    }
    const std::string warmUp = timeOutlierNote(*run.analysed->model);
    return out + "</table><p class=\"muted\">Chain: " + std::to_string(run.analysed->model->layers.size())
           + " layers. The model behind the predictions is described in docs/planning.md."
           + (warmUp.empty() ? "" : " " + escapeHtml(warmUp)) + "</p>";
}

// The runs as the app's Runs table shows them, in two tables narrow enough for a printed
// page: the peak predicted against measured, and the step time as a change, the one the
// model predicted (the what-if bar's) beside the one measured against the baseline run again
// beside the rerun.
std::string comparisonTables(const ReportData &data)
{
    const ReportRun &baseline = data.runs.front();
    const auto nameOf = [](const ReportRun &run) { return escapeHtml(std::filesystem::path(run.name).filename().string()); };
    const auto checkpointed = [](const ReportRun &run) {
        const std::size_t count = run.analysed->checkpoint.size();
        return count == 0 ? std::string("nothing") : std::to_string(count) + (count == 1 ? " layer" : " layers");
    };
    std::string peaks =
        "<h3>Peak</h3><table width=\"100%\"><thead><tr><th>run</th><th>checkpointed</th><th class=\"n\">predicted</th>"
        "<th class=\"n\">measured</th><th class=\"n\">error</th></tr></thead>"
        "<tr><td>baseline</td><td>"
        + checkpointed(baseline) + "</td><td></td><td class=\"n\">" + escapeHtml(formatBytes(baseline.analysed->peakBytes))
        + "</td><td></td></tr>";
    // One word per header under its group's name, so that no header breaks inside a word.
    std::string steps = "<h3>Step time</h3><table width=\"100%\"><thead><tr><th rowspan=\"2\">run</th>"
                        "<th class=\"group\" colspan=\"2\">step time</th><th class=\"group\" colspan=\"2\">change</th></tr>"
                        "<tr><th class=\"n\">baseline</th><th class=\"n\">measured</th><th class=\"n\">predicted</th>"
                        "<th class=\"n\">measured</th></tr></thead>"
                        "<tr><td>baseline</td><td></td><td class=\"n\">"
                        + escapeHtml(ms(baseline.analysed->summary.stepTimeNs))
                        + "</td><td class=\"n\">reference</td><td class=\"n\">reference</td></tr>";
    const std::int64_t modelStepNs =
        baseline.analysed->model ? predict(*baseline.analysed->model, CheckpointSchedule{}).stepTimeNs : 0;
    for (const ReportComparison &comparison : data.comparisons) {
        const ReportRun &run = data.runs[comparison.run];
        // A rerun's own measurement when there is one: the same figures as the app's Runs table.
        const std::optional<ReplayResult> &measured = run.measured;
        const std::int64_t peak =
            measured && measured->peakAllocatedBytes ? *measured->peakAllocatedBytes : run.analysed->peakBytes;
        const std::vector<double> runMs = measured && !measured->stepTimesMs.empty()
                                              ? measured->stepTimesMs
                                              : std::vector<double>{static_cast<double>(run.analysed->summary.stepTimeNs) / 1e6};
        const StepChange change = stepChange(comparison.row ? comparison.row->predicted.stepTimeNs : 0, modelStepNs,
                                             measured ? measured->baselineStepTimesMs() : std::vector<double>(), runMs);
        const std::string runName = "<td>" + nameOf(run) + "</td>";
        peaks += "<tr>" + runName + "<td>" + checkpointed(run) + "</td>";
        if (comparison.row) {
            const std::int64_t predicted = comparison.row->predicted.peakBytes;
            peaks += "<td class=\"n\">" + escapeHtml(formatBytes(predicted)) + "</td><td class=\"n\">"
                     + escapeHtml(formatBytes(peak)) + "</td><td class=\"n\">"
                     + percentChange(static_cast<double>(predicted), static_cast<double>(peak)) + "</td></tr>";
        } else {
            peaks += "<td class=\"muted\">none: " + escapeHtml(comparison.problem) + "</td><td class=\"n\">"
                     + escapeHtml(formatBytes(peak)) + "</td><td></td></tr>";
        }
        std::string measuredChange;
        if (change.measured)
            measuredChange = escapeHtml(changeText(*change.measured));
        else if (baseline.analysed->summary.stepTimeNs > 0)
            measuredChange = percentChange(change.run->medianMs * 1e6, static_cast<double>(baseline.analysed->summary.stepTimeNs))
                             + "<br/><span class=\"muted\">against the recorded baseline</span>";
        steps += "<tr>" + runName + "<td class=\"n\">"
                 + (change.baselineHere ? escapeHtml(ms(static_cast<std::int64_t>(change.baselineHere->medianMs * 1e6)))
                                        : std::string())
                 + "</td><td class=\"n\">" + escapeHtml(ms(static_cast<std::int64_t>(change.run->medianMs * 1e6)))
                 + "</td><td class=\"n\">"
                 + (comparison.row ? escapeHtml(signedPercentText(change.predictedPercent)) : std::string())
                 + "</td><td class=\"n\">";
        steps.append(measuredChange).append("</td></tr>");
    }
    return peaks + "</table>" + steps
           + "</table><p class=\"muted\">Baseline: the baseline's toggles run again beside the rerun, on the same machine; "
             "the measured change is the rerun against it, with the range of the step-by-step changes.</p>";
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
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

namespace {

std::string render(const ReportData &data, ChartSink &charts)
{
    std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>PeakLens report — "
                       + escapeHtml(data.runs.empty() ? std::string() : data.runs.front().name) + "</title><style>" + kStyle
                       + (charts.isAside() ? kPrintStyle : "") + "</style></head><body>";
    for (std::size_t i = 0; i < data.runs.size(); ++i) {
        const ReportRun &run = data.runs[i];
        if (i == 1) {
            const auto comparison = comparisonChart(data);
            html += "<section><h1>Runs compared with the baseline</h1></section><section><h2>Predicted against measured</h2>"
                    + comparisonTables(data) + (comparison ? charts.place(*comparison) : std::string())
                    + "<p class=\"muted\">Predictions come from the baseline's trace and each run's checkpointed layers; "
                      "measured figures from the run's own trace.</p></section>";
        }
        html += std::string("<section>")
                + (i == 0 ? "<h1>PeakLens memory report</h1>" : "<h1>Run: " + escapeHtml(run.name) + "</h1>");
        html += "<p class=\"muted\">" + escapeHtml(run.name) + " · peaklens " + PEAKLENS_VERSION + "</p></section>";
        html += "<section><h2>Peak</h2>" + peakCards(run) + "</section>";
        if (isStateOnly(*run.analysed->trace)) {
            // One moment, no timeline: the state, and what it says of a failure there.
            std::string verdicts = "<p>" + escapeHtml(std::string(kStateOnlyHeadline)) + "</p>";
            for (const DevicePeak &peak : run.analysed->summary.peak.devices)
                verdicts +=
                    "<p class=\"verdict\">" + escapeHtml(judgeDumpState(*run.analysed->trace, peak.device).explanation) + "</p>";
            html += "<section><h2>Allocator state</h2>" + verdicts + "</section>";
        } else {
            const auto timeline = timelineChart(run);
            html += "<section><h2>Memory over time</h2>"
                    + (timeline ? charts.place(*timeline) : std::string("<p class=\"muted\">The trace allocates nothing.</p>"))
                    + "</section>";
        }
        const auto bars = layerBarsChart(run);
        html += "<section><h2>Activations kept for the backward pass, by layer</h2>"
                + (bars ? charts.place(*bars)
                        : std::string("<p class=\"muted\">No layer keeps activations for the backward pass (the trace has no "
                                      "forward ranges).</p>"))
                + "</section>";
        html += "<section><h2>Live at the peak</h2>" + liveTables(run) + flameGraphs(run, charts) + "</section>";
        if (i > 0 && !run.analysed->checkpoint.empty()) {
            // Its trace already runs with toggles: plans from it would stack on them.
            html += "<section><h2>What checkpointing would do</h2><p class=\"muted\">This run already checkpoints "
                    + std::to_string(run.analysed->checkpoint.size())
                    + (run.analysed->checkpoint.size() == 1 ? " layer" : " layers")
                    + "; the baseline's section gives the plans, from a trace without toggles.</p></section>";
        } else {
            html += "<section><h2>What checkpointing would do</h2>" + planTable(run) + "</section>";
        }
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
