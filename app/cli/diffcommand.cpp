// SPDX-License-Identifier: Apache-2.0
// peaklens-cli diff A B [--json] [--top N]: two traces compared at their peaks: the peaks,
// reserved peaks and step times side by side, and what is live at each peak by layer,
// allocation site and category, the largest changes first.

#include "diffcommand.h"

#include "command.h"
#include "commandtrace.h"
#include "textoutput.h"

#include "core/analysis/tracediff.h"
#include "core/report/jsondump.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>
#include <memory>
#include <optional>

namespace peaklens::cli {

namespace {

using json = nlohmann::ordered_json;

std::string signedBytes(std::int64_t bytes)
{
    return (bytes > 0 ? "+" : "") + formatBytes(bytes);
}

std::string signedDuration(std::int64_t ns)
{
    return (ns > 0 ? "+" : "") + formatDuration(ns);
}

// "+200 MiB (+25.0 %)": the change, and against A when A is not zero.
std::string change(std::int64_t a, std::int64_t b, std::string (*format)(std::int64_t))
{
    std::string out = format(b - a);
    if (a != 0 && b != a) {
        const std::string share = percent(static_cast<double>(b - a), static_cast<double>(a));
        out += " (" + std::string(b > a ? "+" : "") + share + ")";
    }
    return out;
}

// A figure either trace may lack: `missing` where it does, a change only where both have it.
void addFigureRow(TextTable &table, const char *name, const std::optional<std::int64_t> &a, const std::optional<std::int64_t> &b,
                  std::string (*format)(std::int64_t), std::string (*signedFormat)(std::int64_t), const char *missing)
{
    if (!a && !b)
        return;
    const auto cell = [&](const std::optional<std::int64_t> &value) { return value ? format(*value) : std::string(missing); };
    table.addRow({name, cell(a), cell(b), a && b ? change(*a, *b, signedFormat) : std::string()});
}

std::string headline(const std::string &pathA, const std::string &pathB, const TraceDiff &diff)
{
    std::string out = "A  " + visibleText(pathA) + "\nB  " + visibleText(pathB) + "\n\n";
    TextTable table({"", "A", "B", "change"}, {false, true, true, true});
    const auto peak = [](const PeakFigures &f) {
        return formatBytes(f.peakBytes) + (f.device ? " on " + f.device->toString() : std::string());
    };
    table.addRow({"peak allocated", peak(diff.a), peak(diff.b), change(diff.a.peakBytes, diff.b.peakBytes, signedBytes)});
    addFigureRow(table, "peak reserved", diff.a.reservedBytes, diff.b.reservedBytes, formatBytes, signedBytes, "unknown");
    table.addRow({"blocks at the peak", formatCount(diff.a.liveBlocks), formatCount(diff.b.liveBlocks),
                  (diff.b.liveBlocks > diff.a.liveBlocks ? "+" : "") + formatCount(diff.b.liveBlocks - diff.a.liveBlocks)});
    addFigureRow(table, "median step time", diff.a.stepTimeNs, diff.b.stepTimeNs, formatDuration, signedDuration, "no steps");
    return out + table.toString();
}

std::string rowsSection(const char *title, const char *column, const std::vector<DiffRow> &rows, std::size_t top)
{
    std::string out = std::string("\n") + title + "\n";
    if (rows.empty())
        return out + "  no change\n";
    TextTable table({column, "A", "B", "change", "", "blocks A", "blocks B"}, {false, true, true, true, false, true, true});
    for (std::size_t i = 0; i < std::min(top, rows.size()); ++i) {
        const DiffRow &row = rows[i];
        table.addRow({visibleText(row.key), formatBytes(row.bytesA), formatBytes(row.bytesB), signedBytes(row.deltaBytes()),
                      std::string(row.change()), formatCount(row.blocksA), formatCount(row.blocksB)});
    }
    out += table.toString();
    if (rows.size() > top)
        out += "  ... and " + std::to_string(rows.size() - top) + " more (--top N shows more)\n";
    return out;
}

// Where each curve is highest over A's peak step, from the step's start on A's clock.
std::string curvesLine(const AlignedStep &curves)
{
    const auto highest = [](const std::vector<SeriesPoint> &points) {
        return *std::max_element(points.begin(), points.end(),
                                 [](const SeriesPoint &x, const SeriesPoint &y) { return x.bytes < y.bytes; });
    };
    if (curves.a.empty() || curves.b.empty())
        return {};
    const std::int64_t begin = curves.a.front().timeNs;
    const SeriesPoint a = highest(curves.a), b = highest(curves.b);
    return "\nOver step " + std::to_string(curves.step) + ", B's step laid onto A's phase by phase: A peaks at "
           + formatBytes(a.bytes) + ", +" + formatDuration(a.timeNs - begin) + " into the step; B at " + formatBytes(b.bytes)
           + ", +" + formatDuration(b.timeNs - begin) + ".\n";
}

std::string textDiff(const std::string &pathA, const std::string &pathB, const TraceDiff &diff, std::size_t top,
                     const std::optional<BlockGrouping> &grouping)
{
    std::string out = headline(pathA, pathB, diff);
    if (diff.samePeaks()) {
        out += "\nNo differences at the peaks: the same bytes in the same blocks, by layer, allocation site and category.\n";
    } else {
        out += rowsSection("Live at the peak by layer, largest change first", "layer", diff.byLayer, top);
        out += rowsSection("By allocation site", "allocated at", diff.bySite, top);
        out += rowsSection("By category", "category", diff.byCategory, top);
        if (grouping)
            out += rowsSection(("By " + grouping->title()).c_str(), "group", diff.byGroup, top);
    }
    if (diff.curves)
        out += curvesLine(*diff.curves);
    return out;
}

template<typename T>
json orNull(const std::optional<T> &value)
{
    return value ? json(*value) : json(nullptr);
}

json sideJson(const std::string &path, const PeakFigures &f)
{
    return {{"file", path},
            {"device", f.device ? json(f.device->toString()) : json(nullptr)},
            {"peak_allocated_bytes", f.peakBytes},
            {"peak_reserved_bytes", orNull(f.reservedBytes)},
            {"peak_step", orNull(f.peakStep)},
            {"step_time_ns", orNull(f.stepTimeNs)},
            {"live_blocks", f.liveBlocks}};
}

json rowsJson(const char *keyName, const std::vector<DiffRow> &rows, std::optional<std::size_t> top, bool withLocation)
{
    json list = json::array();
    for (std::size_t i = 0; i < (top ? std::min(*top, rows.size()) : rows.size()); ++i) {
        const DiffRow &row = rows[i];
        json entry = {{keyName, row.key}};
        if (withLocation)
            entry["location"] = row.detail;
        entry["bytes_a"] = row.bytesA;
        entry["bytes_b"] = row.bytesB;
        entry["delta_bytes"] = row.deltaBytes();
        entry["change"] = row.change();
        entry["blocks_a"] = row.blocksA;
        entry["blocks_b"] = row.blocksB;
        list.push_back(std::move(entry));
    }
    return list;
}

json pointsJson(const std::vector<SeriesPoint> &points)
{
    json list = json::array();
    for (const SeriesPoint &point : points)
        list.push_back({point.timeNs, point.bytes});
    return list;
}

} // namespace

nlohmann::ordered_json diffToJson(const std::string &pathA, const std::string &pathB, const TraceDiff &diff,
                                  std::optional<std::size_t> top, const std::optional<BlockGrouping> &grouping)
{
    const auto difference = [](const std::optional<std::int64_t> &a, const std::optional<std::int64_t> &b) {
        return a && b ? json(*b - *a) : json(nullptr);
    };
    json curves = nullptr;
    if (diff.curves)
        curves = {{"step", diff.curves->step}, {"a", pointsJson(diff.curves->a)}, {"b", pointsJson(diff.curves->b)}};
    json result = {{"a", sideJson(pathA, diff.a)},
                   {"b", sideJson(pathB, diff.b)},
                   {"change",
                    {{"peak_allocated_bytes", diff.peakDeltaBytes()},
                     {"peak_reserved_bytes", difference(diff.a.reservedBytes, diff.b.reservedBytes)},
                     {"step_time_ns", difference(diff.a.stepTimeNs, diff.b.stepTimeNs)},
                     {"live_blocks", diff.b.liveBlocks - diff.a.liveBlocks}}},
                   {"same_peaks", diff.samePeaks()},
                   {"by_layer", rowsJson("layer", diff.byLayer, top, false)},
                   {"by_site", rowsJson("site", diff.bySite, top, true)},
                   {"by_category", rowsJson("category", diff.byCategory, top, false)},
                   {"aligned_step", curves}};
    if (grouping)
        result["by_group"] = {{"grouping", grouping->text()}, {"groups", rowsJson("group", diff.byGroup, top, false)}};
    return result;
}

Command addDiffCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("diff", "Two traces compared at their peaks: by layer, allocation site and category");
    struct Options
    {
        std::string pathA, pathB;
        bool json = false;
        std::size_t top = 10;
        bool topGiven = false;
        std::string group;
    };
    auto options = std::make_shared<Options>();
    command->add_option("A", options->pathA, "The trace to compare against (before)")->required();
    command->add_option("B", options->pathB, "The trace compared (after)")->required();
    command->add_flag("--json", options->json, "Print one JSON object (see docs/cli.md)");
    command->add_option("--top", options->top, "How many rows each table lists (JSON: all unless given)")
        ->check(wholeNumber(1))
        ->each([options](const std::string &) { options->topGiven = true; });
    command->add_option("--group", options->group,
                        "Also compare what is live at the peaks grouped by source file (file), by the innermost "
                        "frame a regular expression matches (regex:PATTERN), by compile-context, user-metadata, "
                        "stage, pool or stream, as summary --group does");
    return {command, [options] {
                const std::optional<BlockGrouping> grouping =
                    options->group.empty() ? std::nullopt : std::optional(parseBlockGrouping(options->group));
                // Both read side by side; A's error, if any, is the one reported.
                auto b = std::async(std::launch::async, [options] { return openForCommand(options->pathB); });
                const AnalysedTracePtr a = openForCommand(options->pathA);
                const AnalysedTracePtr analysedB = b.get();
                const TraceDiff diff = diffTraces(*a->trace, a->summary, *analysedB->trace, analysedB->summary, grouping);
                if (options->json)
                    return dumpJson(diffToJson(options->pathA, options->pathB, diff,
                                               options->topGiven ? std::optional(options->top) : std::nullopt, grouping))
                           + "\n";
                return textDiff(options->pathA, options->pathB, diff, options->top, grouping);
            }};
}

} // namespace peaklens::cli
