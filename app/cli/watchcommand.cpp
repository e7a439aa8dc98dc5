// SPDX-License-Identifier: Apache-2.0
// peaklens-cli watch FILE: follows a trace while its run writes it, a line per step as
// each completes (its peak, time and the layer holding most), and a warning when a step
// comes within a margin of the device's memory. Ends when the writer finishes or stops.

#include "command.h"
#include "textoutput.h"

#include "core/document/growinganalysis.h"
#include "core/error.h"
#include "core/format/tracefollower.h"
#include "core/plan/headroom.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace peaklens::cli {

namespace {

struct WatchOptions
{
    std::string path;
    int intervalMs = 250;
    std::string capacity; // a size, or empty: the trace's device.memory
    double marginPercent = kHeadroomMargin * 100;
    double forSeconds = 0; // 0: until the writer finishes or stops
};

void say(const std::string &line)
{
    std::fputs((line + "\n").c_str(), stdout);
    std::fflush(stdout);
}

std::string layerName(const Trace &trace, std::uint32_t layer)
{
    return layer == kNoLayer ? std::string("(no layer)") : visibleText(trace.layers[layer].path);
}

std::optional<std::int64_t> capacityOf(const Trace &trace, const WatchOptions &options)
{
    if (!options.capacity.empty())
        return parseBudget(options.capacity);
    return deviceCapacity(trace);
}

std::string stepLine(const Trace &trace, const LiveAnalysis::StepFigures &step, std::int64_t firstNs)
{
    std::string line = "step " + std::to_string(step.step.number) + "  " + formatDuration(step.step.durationNs());
    if (step.peakBytes <= 0)
        return line + "  nothing allocated";
    line += "  peak " + formatBytes(step.peakBytes) + " on " + step.device.toString() + " at +"
            + formatDuration(step.peakTimeNs - firstNs);
    if (step.peakPhase != Phase::Other)
        line += " in " + std::string(phaseName(step.peakPhase));
    if (step.peakLayer != kNoLayer)
        line += " of " + layerName(trace, step.peakLayer);
    if (step.topLayerBytes > 0)
        line += "  most held by " + layerName(trace, step.topLayer) + " (" + formatBytes(step.topLayerBytes) + ")";
    return line;
}

// The cheapest toggles that would give the margin back, planned on the model of what was
// recorded so far, the one the app's live view advises from; only for a step that set a
// new high.
std::string adviceLine(const GrowingAnalysis &analysis, std::int64_t capacity, double margin)
{
    const std::optional<CostModel> model = analysis.model();
    if (!model)
        return "advice: none yet: " + analysis.modelProblem();
    const HeadroomAdvice advice = adviseHeadroom(*model, capacity, margin);
    std::string line = "advice: " + advice.sentence(*model) + ".";
    if (advice.plan.feasible && !advice.plan.schedule.empty())
        line +=
            " Strategy for a rerun: " + advice.strategy + " (peaklens-replay --checkpoint, PEAKLENS_CHECKPOINT for a recording).";
    return line;
}

CommandOutput watch(const WatchOptions &options)
{
    if (options.intervalMs < 10 || options.intervalMs > 60000)
        throw Error("--interval must be between 10 and 60000 ms.");
    if (!(options.marginPercent >= 0 && options.marginPercent < 100))
        throw Error("--margin must be a percentage from 0 to 100.");
    if (!(std::isfinite(options.forSeconds) && options.forSeconds >= 0))
        throw Error("--for must be a number of seconds, 0 or more.");
    TraceFollower follower(options.path);
    GrowingAnalysis growing;
    const LiveAnalysis &analysis = growing.live();
    const auto started = std::chrono::steady_clock::now();
    std::size_t printed = 0;
    bool announced = false;
    std::int64_t advisedAt = 0; // the highest step peak advice was given for
    for (;;) {
        const TraceFollower::Update update = follower.poll();
        const Trace &trace = follower.trace();
        if (!announced && follower.writer() != TraceFollower::Writer::Waiting) {
            say("Following " + visibleText(options.path) + ": " + follower.writerText() + ".");
            announced = true;
        }
        growing.update(trace, follower.growth(update));
        const std::int64_t firstNs = trace.events.empty() ? 0 : trace.events.timeNs(0);
        const auto capacity = capacityOf(trace, options);
        for (; printed < analysis.steps().size(); ++printed) {
            const LiveAnalysis::StepFigures &step = analysis.steps()[printed];
            say(stepLine(trace, step, firstNs));
            if (capacity && nearCapacity(step.peakBytes, *capacity, options.marginPercent / 100)) {
                say("warning: step " + std::to_string(step.step.number) + " peaked at "
                    + percent(static_cast<double>(step.peakBytes), static_cast<double>(*capacity)) + " of the "
                    + formatBytes(*capacity) + " " + step.device.toString() + " can hold, within the "
                    + percent(options.marginPercent, 100) + " margin; "
                    + (step.topLayerBytes > 0
                           ? layerName(trace, step.topLayer) + " held most (" + formatBytes(step.topLayerBytes) + ")."
                           : std::string("no layer held any of it.")));
                if (step.peakBytes > advisedAt) {
                    say(adviceLine(growing, *capacity, options.marginPercent / 100));
                    advisedAt = step.peakBytes;
                }
            }
        }
        if (!follower.isLive()) {
            std::string last = "Done: " + follower.writerText() + ". "
                               + formatCount(static_cast<std::int64_t>(trace.events.size())) + " memory events";
            if (const auto primary = analysis.primary()) {
                const DevicePeak &peak = analysis.peaks()[*primary];
                last += ", peak " + formatBytes(peak.allocatedBytes) + " on " + peak.device.toString();
            }
            say(last + ".");
            return CommandOutput("", follower.writer() == TraceFollower::Writer::Stopped ? 3 : 0);
        }
        if (options.forSeconds > 0
            && std::chrono::steady_clock::now() - started >= std::chrono::duration<double>(options.forSeconds)) {
            say("Stopped following after " + formatDuration(static_cast<std::int64_t>(options.forSeconds * 1e9)) + "; "
                + follower.writerText() + ".");
            return CommandOutput("");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(options.intervalMs));
    }
}

} // namespace

Command addWatchCommand(CLI::App &app)
{
    auto options = std::make_shared<WatchOptions>();
    CLI::App *command = app.add_subcommand("watch", "Follow a trace while its run writes it: a line per step, and a "
                                                    "warning near the device's memory");
    command->add_option("file", options->path, "The .peaklens file a recording or replay is writing")->required();
    command->add_option("--interval", options->intervalMs, "How often to look for new rows, in ms (default 250)");
    command
        ->add_option("--capacity", options->capacity,
                     "The device's memory, e.g. 80GiB (default: the trace's device.memory, if it says)")
        ->type_name("SIZE");
    command->add_option("--margin", options->marginPercent, "Warn when a step's peak comes this close, in % (default 5)");
    command->add_option("--for", options->forSeconds, "Stop following after this many seconds (default: until the writer ends)");
    return {command, [options] { return watch(*options); }};
}

} // namespace peaklens::cli
