// SPDX-License-Identifier: Apache-2.0
// peaklens-cli summary FILE [--json] [--top N]: the peak, what is live at it, the layers
// holding the most activations, and the steps.
// peaklens-cli summary FILE FILE... [--json]: the ranks of a distributed run side by side.

#include "command.h"
#include "textoutput.h"

#include "core/analysis/allocationsites.h"
#include "core/analysis/allocatorstate.h"
#include "core/analysis/blockgroups.h"
#include "core/analysis/crossrank.h"
#include "core/analysis/layerranking.h"
#include "core/analysis/poolfigures.h"
#include "core/analysis/stagestats.h"
#include "core/analysis/timelineseries.h"
#include "core/analysis/tracesummary.h"
#include "core/document/filesummary.h"
#include "core/import/traceloader.h"
#include "core/report/jsondump.h"
#include "core/report/summaryjson.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <optional>
#include <thread>

namespace peaklens::cli {

namespace {

std::string plural(std::size_t count, const std::string &noun)
{
    return formatCount(static_cast<std::int64_t>(count)) + " " + noun + (count == 1 ? "" : "s");
}

std::string layerLabel(const Trace &trace, std::uint32_t layer)
{
    return layer == kNoLayer ? std::string("(no layer)") : trace.layers[layer].path;
}

std::string peakSection(const Trace &trace, const TraceSummary &summary)
{
    if (!summary.peak.primary)
        return "No memory was allocated in this trace.\n";
    const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
    // Times read as offsets from the first event: trace clocks are often epoch-based.
    std::string where = isStateOnly(trace) ? std::string("at dump time") : "at +" + formatDuration(peak.timeNs - summary.firstNs);
    if (summary.peakStep)
        where += ", step " + std::to_string(*summary.peakStep);
    if (summary.peakPhase != Phase::Other)
        where += ", " + std::string(phaseName(summary.peakPhase));
    if (summary.peakLayer != kNoLayer)
        where += ", in " + trace.layers[summary.peakLayer].path;
    std::string out =
        "Peak allocated  " + formatBytes(peak.allocatedBytes) + " on " + peak.device.toString() + " " + where + "\n";
    // Users compare the peak with max_memory_allocated: say what it counts.
    out += "                " + peakCountingNote(trace, summary.peak.liveAtPeak) + "\n";
    if (peak.reservedBytes) {
        out +=
            "Peak reserved   " + formatBytes(*peak.reservedBytes) + " "
            + (isStateOnly(trace) ? std::string("at dump time") : "at +" + formatDuration(*peak.reservedTimeNs - summary.firstNs))
            + " (" + formatBytes(peak.reservedAtPeakBytes.value_or(0)) + " reserved at the allocated peak)\n";
    } else {
        out += "Peak reserved   unknown (the trace has no segment events)\n";
    }
    for (std::size_t d = 0; d < summary.peak.devices.size(); ++d) {
        if (d != *summary.peak.primary)
            out += "Also            " + formatBytes(summary.peak.devices[d].allocatedBytes) + " peak on "
                   + summary.peak.devices[d].device.toString() + "\n";
    }
    return out;
}

// Every frame of the largest stacks at the peak, each marked with what kind of code it is.
std::string fullStacks(const Trace &trace, const LiveSet &live, const AllocationSites &sites, std::size_t top)
{
    std::string out = "\nLargest call stacks at the peak, innermost frame first\n";
    for (std::size_t i = 0; i < std::min(top, live.byStack.size()); ++i) {
        const LiveGroup &group = live.byStack[i];
        out += "  " + std::to_string(i + 1) + ". " + formatBytes(group.bytes) + " in " + formatCount(group.blocks) + " blocks, "
               + sites.label(sites.siteOf(group.key)) + "\n";
        for (const StackLine &line : describeStack(trace.stacks, sites, group.key, true)) {
            const std::string_view kind = frameKindName(line.kind);
            out += "       " + std::string(kind) + std::string(12 - kind.size(), ' ') + line.text + "\n";
        }
    }
    return out;
}

std::string liveSection(const Trace &trace, const LiveSet &live, std::size_t top, bool withFullStacks,
                        const std::optional<BlockGrouping> &grouping)
{
    std::string out = "\nLive at the peak: " + formatBytes(live.bytes) + " in "
                      + formatCount(static_cast<std::int64_t>(live.allocations.size())) + " blocks\n";
    const auto group = [&](const char *title, const std::vector<LiveGroup> &groups, auto label, auto detail) {
        TextTable table({title, "bytes", "share", "blocks", detail(std::nullopt)}, {false, true, true, true, false});
        for (std::size_t i = 0; i < std::min(top, groups.size()); ++i)
            table.addRow({label(groups[i].key), formatBytes(groups[i].bytes),
                          percent(static_cast<double>(groups[i].bytes), static_cast<double>(live.bytes)),
                          formatCount(groups[i].blocks), detail(groups[i])});
        out += table.toString();
        if (groups.size() > top)
            out += "  ... and " + std::to_string(groups.size() - top) + " more\n";
    };
    const auto none = [](const std::optional<LiveGroup> &) { return std::string(); };
    group(
        "category", live.byCategory, [](std::uint32_t key) { return std::string(categoryName(static_cast<Category>(key))); },
        none);
    out += "\n";
    group(
        "layer", live.byLayer, [&](std::uint32_t key) { return layerLabel(trace, key); }, none);
    if (live.bySite.size() > 1 || (live.bySite.size() == 1 && live.bySite.front().key != AllocationSites::kNoSite)) {
        const AllocationSites sites(trace.stacks);
        out += "\n";
        group(
            "allocated at", live.bySite, [&](std::uint32_t key) { return sites.label(key); },
            [&](const std::optional<LiveGroup> &g) {
                if (!g)
                    return std::string("called from");
                std::string callers;
                for (const std::string &caller : sites.callers(g->largestStack, 2))
                    callers += (callers.empty() ? "" : " <- ") + caller;
                return callers;
            });
        if (withFullStacks)
            out += fullStacks(trace, live, sites, top);
    }
    if (grouping) {
        out += "\n";
        TextTable table({grouping->title(), "bytes", "share", "blocks"}, {false, true, true, true});
        const std::vector<GroupRow> rows = groupBlocks(trace, AllocationSites(trace.stacks), live, *grouping);
        for (std::size_t i = 0; i < std::min(top, rows.size()); ++i)
            table.addRow({visibleText(rows[i].key), formatBytes(rows[i].bytes),
                          percent(static_cast<double>(rows[i].bytes), static_cast<double>(live.bytes)),
                          formatCount(rows[i].blocks)});
        out += table.toString();
        if (rows.size() > top)
            out += "  ... and " + std::to_string(rows.size() - top) + " more\n";
    }
    return out;
}

// Per memory pool of the peak's device, where the trace names a pool besides the default one.
std::string poolSection(const Trace &trace, const TraceSummary &summary)
{
    if (!summary.peak.primary || !hasPrivatePools(trace) || trace.events.size() != summary.eventCount)
        return {};
    const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
    TextTable table({"pool", "reserved", "allocated", "free in segments", "highest reserved", "at the peak"},
                    {false, true, true, true, true, true});
    for (const PoolFigures &pool : poolFigures(trace, peak.device, peak.eventIndex))
        table.addRow({poolLabel(pool.pool), formatBytes(pool.reservedBytes), formatBytes(pool.allocatedBytes),
                      formatBytes(pool.freeInSegmentsBytes()), formatBytes(pool.highestReservedBytes),
                      formatBytes(pool.allocatedAtPeakBytes)});
    return "\nMemory pools on " + peak.device.toString()
           + " at the trace's end (reserved and allocated), and allocated at the peak\n" + table.toString();
}

// The stages (profiler annotations) by the most memory the peak's device held in them.
std::string stageSection(const Trace &trace, const TraceSummary &summary, std::size_t top)
{
    if (!summary.peak.primary || trace.stageNames.empty() || trace.events.size() != summary.eventCount)
        return {};
    const DevicePeak &peak = summary.peak.devices[*summary.peak.primary];
    const std::vector<StageStats> stages = stageStats(trace, peak.device, peak.timeNs);
    if (stages.empty())
        return {};
    TextTable table({"stage", "spans", "time", "highest allocated", "at the peak"}, {false, true, true, true, false});
    for (std::size_t i = 0; i < std::min(top, stages.size()); ++i)
        table.addRow({visibleText(stages[i].name), formatCount(stages[i].spans), formatDuration(stages[i].totalNs),
                      formatBytes(stages[i].highestBytes), stages[i].holdsPeak ? "open" : ""});
    std::string out =
        "\nStages on " + peak.device.toString() + " (profiler annotations), by the most allocated in them\n" + table.toString();
    if (stages.size() > top)
        out += "  ... and " + std::to_string(stages.size() - top) + " more\n";
    return out;
}

std::string layerSection(const Trace &trace, const TraceSummary &summary, std::size_t top)
{
    const auto ranked = rankLayersByActivation(trace, summary.layers);
    if (ranked.empty())
        return {};
    TextTable table({"layer", "kind", "activations", "self", "forward", "backward"}, {false, false, true, true, true, true});
    for (std::size_t i = 0; i < std::min(top, ranked.size()); ++i) {
        const LayerStats &s = summary.layers[ranked[i]];
        const Layer &layer = trace.layers[s.layer];
        table.addRow({layer.path, layer.kind, formatBytes(s.activationBytes), formatBytes(s.selfActivationBytes),
                      formatDuration(s.forwardNs), formatDuration(s.backwardNs)});
    }
    std::string out = "\nLayers by activation bytes left for the backward pass\n" + table.toString();
    if (ranked.size() > top)
        out += "  ... and " + std::to_string(ranked.size() - top) + " more (--top N shows more)\n";
    return out;
}

std::string stepSection(const TraceSummary &summary, std::size_t top)
{
    if (summary.steps.empty())
        return {};
    TextTable table({"step", "duration", "start", "peak", "peak at", "phase", "allocated"},
                    {true, true, true, true, true, false, true});
    for (std::size_t i = 0; i < std::min(top, summary.steps.size()); ++i) {
        const StepStats &s = summary.steps[i];
        table.addRow({std::to_string(s.number), formatDuration(s.durationNs()), formatBytes(s.startBytes),
                      formatBytes(s.peakAllocatedBytes), "+" + formatDuration(s.peakTimeNs - s.beginNs),
                      std::string(phaseName(s.peakPhase)), formatBytes(s.allocatedBytes)});
    }
    std::string out = "\nSteps\n" + table.toString();
    if (summary.steps.size() > top)
        out += "  ... and " + std::to_string(summary.steps.size() - top) + " more\n";
    return out;
}

std::string textSummary(const std::string &path, const Trace &trace, const TraceSummary &summary, std::size_t top,
                        bool withFullStacks, const std::optional<BlockGrouping> &grouping)
{
    std::string out = visibleText(path) + "\n";
    if (auto description = trace.metaValue(metakey::Description); !description.empty())
        out += description + "\n";
    if (auto warnings = trace.metaValue(metakey::ImportWarnings); !warnings.empty())
        out += "Warning: " + warnings + "\n";
    if (isStateOnly(trace)) {
        // The blocks are the state at one moment, not events of a timeline: say so, and judge it.
        out += std::string(kStateOnlyHeadline) + " " + plural(summary.eventCount, "block") + " live then.\n";
        for (const DevicePeak &device : summary.peak.devices)
            out += judgeDumpState(trace, device.device).explanation + "\n";
        out += "\n";
    } else {
        out += formatCount(static_cast<std::int64_t>(summary.eventCount)) + " memory events over "
               + formatDuration(summary.lastNs - summary.firstNs) + ", " + plural(trace.steps.size(), "step") + ", "
               + plural(trace.layers.size(), "layer") + "\n\n";
    }
    out += peakSection(trace, summary);
    out += poolSection(trace, summary);
    out += stageSection(trace, summary, top);
    if (summary.peak.liveAtPeak)
        out += liveSection(trace, *summary.peak.liveAtPeak, top, withFullStacks, grouping);
    out += layerSection(trace, summary, top);
    out += stepSection(summary, top);
    return out;
}

// Each rank read, reduced to its row and dropped, on as many threads as the machine has
// cores: however many ranks, no more traces than threads are in memory at once. The first
// file (in the order given) that fails is the one reported; after a failure no further
// file is started.
std::vector<RankOverview> overviewRanks(const std::vector<std::string> &paths)
{
    std::vector<RankOverview> overviews(paths.size());
    std::vector<std::optional<std::string>> errors(paths.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    const auto work = [&] {
        for (std::size_t i = next++; i < paths.size() && !failed; i = next++) {
            try {
                const TracePtr trace = loadTrace(paths[i]);
                overviews[i] = overviewRank(paths[i], *trace, 0);
            } catch (const FileError &error) {
                errors[i] = error.what();
            } catch (const std::bad_alloc &) {
                errors[i] = paths[i] + ": ran out of memory while reading it.";
            } catch (const std::exception &error) {
                errors[i] = paths[i] + ": " + error.what();
            }
            if (errors[i])
                failed = true;
        }
    };
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, paths.size());
    {
        std::vector<std::jthread> workers;
        for (std::size_t t = 1; t < threads; ++t)
            workers.emplace_back(work);
        work();
    }
    for (const auto &error : errors) {
        if (error)
            throw Error(*error);
    }
    return overviews;
}

std::string rankLabel(const RankRow &row)
{
    return row.overview.rank ? std::to_string(row.rank) : "(" + std::to_string(row.rank) + ")";
}

std::string textRanks(const CrossRankTable &table)
{
    std::string out = plural(table.rows.size(), "rank") + ": median peak allocated " + formatBytes(table.medianPeakBytes);
    if (table.medianStepTimeNs)
        out += ", median step time " + formatDuration(*table.medianStepTimeNs);
    out += "\n\n";
    TextTable rows({"rank", "file", "peak allocated", "peak reserved", "step time", "most at the peak", "outlier"},
                   {true, false, true, true, true, false, false});
    bool positions = false;
    for (const RankRow &row : table.rows) {
        const RankOverview &o = row.overview;
        positions = positions || !o.rank;
        rows.addRow({rankLabel(row), visibleText(o.file),
                     formatBytes(o.figures.peakBytes) + (o.figures.device ? " on " + o.figures.device->toString() : ""),
                     o.figures.reservedBytes ? formatBytes(*o.figures.reservedBytes) : std::string("unknown"),
                     o.figures.stepTimeNs ? formatDuration(*o.figures.stepTimeNs) : std::string("no steps"),
                     o.topLayer.empty() ? std::string() : o.topLayer + " (" + formatBytes(o.topLayerBytes) + ")", row.reason});
    }
    out += rows.toString();
    if (positions)
        out += "(N): the file's metadata names no rank; N is its place on the command line, from 0\n";
    const auto outliers = std::count_if(table.rows.begin(), table.rows.end(), [](const RankRow &row) { return row.outlier; });
    if (outliers == 0)
        out += "\nNo outliers: every rank's peak and step time lie within max(3 x MAD, 5 %) of the ranks' median.\n";
    else
        out += "\n" + plural(static_cast<std::size_t>(outliers), "outlier")
               + ": further from the ranks' median than max(3 x MAD, 5 %) of it.\n";
    return out;
}

std::string jsonRanks(const CrossRankTable &table)
{
    using json = nlohmann::ordered_json;
    const auto orNull = [](const std::optional<std::int64_t> &value) { return value ? json(*value) : json(nullptr); };
    json ranks = json::array();
    for (const RankRow &row : table.rows) {
        const RankOverview &o = row.overview;
        ranks.push_back({{"rank", row.rank},
                         {"rank_from_metadata", o.rank.has_value()},
                         {"world_size", orNull(o.worldSize)},
                         {"file", o.file},
                         {"events", o.events},
                         {"first_ns", o.firstNs},
                         {"last_ns", o.lastNs},
                         {"device", o.figures.device ? json(o.figures.device->toString()) : json(nullptr)},
                         {"peak_allocated_bytes", o.figures.peakBytes},
                         {"peak_reserved_bytes", orNull(o.figures.reservedBytes)},
                         {"peak_step", orNull(o.figures.peakStep)},
                         {"step_time_ns", orNull(o.figures.stepTimeNs)},
                         {"top_layer", o.topLayer.empty() ? json(nullptr) : json(o.topLayer)},
                         {"top_layer_bytes", o.topLayerBytes},
                         {"outlier", row.outlier},
                         {"reason", row.outlier ? json(row.reason) : json(nullptr)}});
    }
    return dumpJson({{"ranks", ranks},
                     {"median_peak_allocated_bytes", table.medianPeakBytes},
                     {"median_step_time_ns", orNull(table.medianStepTimeNs)}})
           + "\n";
}

} // namespace

Command addSummaryCommand(CLI::App &app)
{
    auto *command =
        app.add_subcommand("summary", "The peak, what is live at it, layers and steps; of several files, the ranks side by side");
    struct Options
    {
        std::vector<std::string> paths;
        bool json = false;
        std::size_t top = 10;
        bool topGiven = false;
        bool fullStacks = false;
        std::string group;
    };
    auto options = std::make_shared<Options>();
    command->add_option("FILE", options->paths, "Trace file (any format PeakLens reads: docs/formats.md); several: one per rank")
        ->required();
    command->add_flag("--json", options->json, "Print one JSON object (see docs/cli.md)");
    command->add_option("--top", options->top, "How many layers, groups and steps to list (JSON: all unless given)")
        ->check(wholeNumber(1))
        ->each([options](const std::string &) { options->topGiven = true; });
    command->add_flag("--full-stacks", options->fullStacks,
                      "Also print every frame of the largest call stacks at the peak, allocator and interpreter included");
    command->add_option("--group", options->group,
                        "Also group what is live at the peak by the source file of each block's allocation site "
                        "(file), by the innermost frame a regular expression matches (regex:PATTERN; its first "
                        "capture group names the group where it has one), by the torch.compile graph or user metadata "
                        "of a snapshot's entries (compile-context, user-metadata), by the stage (profiler annotation) "
                        "a block was allocated in (stage), or by memory pool or stream (pool, stream)");
    return {command, [options] {
                const std::optional<BlockGrouping> grouping =
                    options->group.empty() ? std::nullopt : std::optional(parseBlockGrouping(options->group));
                if (options->paths.size() > 1) {
                    if (options->fullStacks)
                        throw Error("--full-stacks shows the stacks of one trace; give one file.");
                    if (grouping)
                        throw Error("--group groups the blocks of one trace; give one file.");
                    const CrossRankTable table = crossRankTable(overviewRanks(options->paths));
                    return options->json ? jsonRanks(table) : textRanks(table);
                }
                const std::string &path = options->paths.front();
                // A big native file is summarized as it is read, never held whole.
                const FileSummary file = summarizeFile(path);
                if (options->json)
                    return summaryToJson(*file.trace, file.summary,
                                         options->topGiven ? std::optional(options->top) : std::nullopt, grouping)
                           + "\n";
                return textSummary(path, *file.trace, file.summary, options->top, options->fullStacks, grouping);
            }};
}

} // namespace peaklens::cli
