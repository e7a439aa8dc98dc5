// SPDX-License-Identifier: Apache-2.0
// peaklens-cli rerun TRACE (--checkpoint STRATEGY | --budget SIZE) [--steps N] [--out DIR] [--json]
// Runs the trace again with other checkpoint toggles, as the app's Rerun does (the launches
// of core/plan/rerunlaunch.h): a replayed trace through peaklens-replay, a recorded one by
// relaunching its command under `record`, the baseline's toggles measured beside the new
// ones. Prints the peak and step time predicted against those measured, with the spread.

#include "childprocess.h"
#include "command.h"
#include "commandtrace.h"
#include "textoutput.h"
#include "tracestream.h"

#include "core/error.h"
#include "core/format/remotefile.h"
#include "core/plan/budget.h"
#include "core/plan/planner.h"
#include "core/plan/rerunlaunch.h"
#include "core/plan/rerunrow.h"
#include "core/report/jsondump.h"
#include "core/trace/units.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

namespace peaklens::cli {

namespace {

using json = nlohmann::ordered_json;

struct RerunOptions
{
    std::string path;
    std::string checkpoint;
    std::string budget;
    int steps = 0;
    std::string out;
    bool json = false;
    bool send = false; // on a host, for `rerun ssh://HOST/PATH` on another machine
};

// peaklens-replay or peaklens-cli: in PEAKLENS_PLUGIN_DIR, else beside this program.
std::string program(const std::string &name)
{
    const char *pluginDir = std::getenv("PEAKLENS_PLUGIN_DIR");
    for (const std::filesystem::path &directory :
         {pluginDir ? std::filesystem::path(pluginDir) : std::filesystem::path(), ownDirectory()}) {
        if (!directory.empty() && ::access((directory / name).c_str(), X_OK) == 0)
            return (directory / name).string();
    }
    throw Error(name + " is neither beside peaklens-cli nor in PEAKLENS_PLUGIN_DIR; install it to rerun.");
}

std::string readFile(const std::filesystem::path &path)
{
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The last line of a log that is not a JSON progress line: why a child failed.
std::string lastWords(const std::filesystem::path &log)
{
    std::istringstream lines(readFile(log));
    std::string line, last;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.front() != '{')
            last = line;
    }
    return last;
}

// A relaunched command's steps, as its trace has them.
ReplaySteps measuredIn(const std::string &trace)
{
    const AnalysedTracePtr analysed = openForCommand(trace);
    ReplaySteps steps;
    steps.checkpoint = analysed->checkpoint;
    steps.peakAllocatedBytes = analysed->peakBytes;
    steps.stepTimesMs = analysed->stepTimesMs();
    steps.tracePath = trace;
    return steps;
}

ReplayResult runReplay(const RerunLaunch &launch, const std::filesystem::path &folder)
{
    ChildProcess child{{program(launch.program)},        launch.environment,
                       launch.workingDirectory,          (folder / "result.json").string(),
                       (folder / "replay.log").string(), false};
    child.arguments.insert(child.arguments.end(), launch.arguments.begin(), launch.arguments.end());
    const int code = runChild(child);
    if (code != 0 && code != 3 && code != 4) // 3: out of memory, 4: gradients differ
        throw Error("peaklens-replay exited with " + std::to_string(code) + ": " + lastWords(folder / "replay.log"));
    return ReplayResult::fromJson(readFile(folder / "result.json"), "peaklens-replay's result");
}

ReplaySteps runRelaunch(const RerunLaunch &launch, const std::string &rank, const std::string &which)
{
    ChildProcess child{{program(launch.program)}, launch.environment, launch.workingDirectory, {}, {}, true};
    child.arguments.insert(child.arguments.end(), launch.arguments.begin(), launch.arguments.end());
    const int code = runChild(child);
    const std::optional<std::string> trace = relaunchedTrace(launch.traceFolder, rank);
    if (code != 0)
        throw Error("the command " + which + " exited with " + std::to_string(code) + ".");
    if (!trace)
        throw Error("the command " + which + " left no trace in " + launch.traceFolder + " (did it import torch?).");
    return measuredIn(*trace);
}

// The folder the rerun's traces go to: new, or empty. Made unless `make` is false (the
// traces from a host make it when they come).
std::filesystem::path outFolder(const RerunOptions &options, bool make = true)
{
    const std::filesystem::path out = options.out.empty() ? "peaklens-rerun-" + std::to_string(::getpid()) : options.out;
    std::error_code ec;
    if (std::filesystem::exists(out, ec) && !std::filesystem::is_empty(out, ec))
        throw FileError(out.string(), "is not empty; give --out a new folder.");
    if (make)
        std::filesystem::create_directories(out, ec);
    if (ec)
        throw FileError(out.string(), "cannot be created: " + ec.message() + ".");
    return std::filesystem::absolute(out);
}

// The options a rerun passes on to another peaklens-cli rerun, each word as `quote` makes it.
std::vector<std::string> forwardedOptions(const RerunOptions &options, const std::function<std::string(std::string)> &quote)
{
    std::vector<std::string> words;
    if (!options.checkpoint.empty())
        words.insert(words.end(), {"--checkpoint", quote(options.checkpoint)});
    if (!options.budget.empty())
        words.insert(words.end(), {"--budget", quote(options.budget)});
    if (options.steps > 0)
        words.insert(words.end(), {"--steps", std::to_string(options.steps)});
    if (options.json)
        words.emplace_back("--json");
    return words;
}

// `rerun ssh://HOST/PATH`: the rerun runs on the host (`rerun --send` there), in a folder of
// its own in the home folder; its traces and files are copied into --out here as they
// grow, and what it printed is printed with its paths made the copies'.
CommandOutput rerunOnHost(const RerunOptions &options, const RemotePath &remote)
{
    const std::filesystem::path local = outFolder(options, false);
    const std::string remoteOut = hostFolderName("peaklens-rerun");
    std::vector<std::string> arguments{"rerun", "--send", RemoteCommand::quoted(remote.path), "--out",
                                       RemoteCommand::quoted(remoteOut)};
    for (const std::string &word : forwardedOptions(options, [](const std::string &word) { return RemoteCommand::quoted(word); }))
        arguments.push_back(word);
    RemoteCommand command(options.path, remote.host, arguments, RemoteCommand::Input::Pipe);
    // What the run prints goes to stderr: stdout is for the result.
    const Received received = receiveTraces(command, local, remoteOut, stderr);
    if (!received.complete)
        throw Error(received.last);
    std::string text = received.last;
    if (!received.remoteFolder.empty()) {
        for (std::size_t at = 0; (at = text.find(received.remoteFolder, at)) != std::string::npos;) {
            text.replace(at, received.remoteFolder.size(), local.string());
            at += local.string().size();
        }
    }
    return {text.empty() || text.ends_with('\n') ? text : text + "\n", received.code};
}

// `rerun --send`: the rerun itself in a child, its result kept for the end, while this
// process sends the traces it writes and what it prints to the machine that asked.
CommandOutput rerunSending(const RerunOptions &options)
{
    const std::filesystem::path folder = outFolder(options);
    char result[] = "/tmp/peaklens-rerun-result-XXXXXX";
    const int resultFile = ::mkstemp(result);
    if (resultFile < 0)
        throw Error(std::string("rerun --send: no file for the result (") + std::strerror(errno) + ").");
    ::close(resultFile);
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    ChildProcess child{{ec ? std::string("peaklens-cli") : self.string(), "rerun", options.path, "--out", folder.string()},
                       {},
                       {},
                       result,
                       {},
                       false};
    for (const std::string &word : forwardedOptions(options, [](std::string word) { return word; }))
        child.arguments.push_back(word);
    int output[2] = {-1, -1};
    if (::pipe2(output, O_CLOEXEC) != 0)
        throw Error(std::string("rerun --send: no pipe for the rerun's output (") + std::strerror(errno) + ").");
    child.outputFd = output[1];
    const pid_t pid = startChild(child);
    ::close(output[1]);
    const int code = sendWhileRunning(pid, output[0], folder, [&](int) {
        std::string text = readFile(result);
        std::filesystem::remove(result, ec);
        return text;
    });
    std::filesystem::remove(result, ec);
    return {std::string(), code};
}

double milliseconds(std::int64_t ns)
{
    return static_cast<double>(ns) / 1e6;
}

json spreadJson(const std::vector<double> &timesMs)
{
    if (timesMs.empty())
        return nullptr;
    const TimingSpread spread = spreadOf(timesMs);
    return {{"median", spread.medianMs}, {"min", spread.minMs}, {"max", spread.maxMs}, {"steps", spread.samples}};
}

json measuredJson(const ReplaySteps &measured)
{
    return {{"peak_bytes", measured.peakAllocatedBytes ? json(*measured.peakAllocatedBytes) : json(nullptr)},
            {"step_time_ms", measured.stepTimesMs.empty() ? json(nullptr) : json(spreadOf(measured.stepTimesMs).medianMs)},
            {"step_time_spread_ms", spreadJson(measured.stepTimesMs)},
            {"step_times_ms", measured.stepTimesMs},
            {"trace", measured.tracePath.empty() ? json(nullptr) : json(measured.tracePath)}};
}

std::string spreadText(const std::vector<double> &timesMs)
{
    if (timesMs.empty())
        return "no steps";
    const TimingSpread spread = spreadOf(timesMs);
    const auto ms = [](double value) { return formatDuration(static_cast<std::int64_t>(std::llround(value * 1e6))); };
    return ms(spread.medianMs) + " (" + ms(spread.minMs) + "…" + ms(spread.maxMs) + ", " + std::to_string(spread.samples)
           + " steps)";
}

std::string peakText(const std::optional<std::int64_t> &bytes)
{
    return bytes ? formatBytes(*bytes) : "unknown";
}

std::string textOutput(const CostModel &model, const RerunRow &row)
{
    const ReplayResult &measured = row.measured;
    const ReplaySteps baselineMeasured = measured.baseline.value_or(ReplaySteps());
    TextTable table({"", "predicted", "measured", "baseline predicted", "baseline measured"}, {false, true, true, true, true});
    std::string error;
    if (const auto percent = row.peakErrorPercent())
        error = " (" + signedPercentText(-*percent) + ")";
    table.addRow({"Peak", formatBytes(row.predicted.peakBytes), peakText(measured.peakAllocatedBytes) + error,
                  formatBytes(row.modelBaseline.peakBytes), peakText(baselineMeasured.peakAllocatedBytes)});
    table.addRow({"Step time", formatDuration(row.predicted.stepTimeNs) + " ± " + formatDuration(row.stepSpreadNs),
                  spreadText(measured.stepTimesMs),
                  formatDuration(row.modelBaseline.stepTimeNs) + " ± " + formatDuration(model.stepTimeSpreadNs),
                  spreadText(baselineMeasured.stepTimesMs)});
    std::string out = "Rerun with " + row.strategy.toString() + ": "
                      + std::to_string(checkpointedPaths(model, row.schedule).size()) + " of "
                      + std::to_string(model.layers.size()) + " layers checkpointed\n" + table.toString();
    if (const auto &change = row.stepChange().measured)
        out += "Step time against the baseline measured beside it: " + changeText(*change) + "\n";
    if (measured.gradients) {
        const ReplayGradientCheck &check = *measured.gradients;
        if (check.agree && check.tolerance >= kBfloat16GradientTolerance) {
            char text[160];
            std::snprintf(text, sizeof text,
                          "Gradients agree with the baseline's within the %.3g %% a plan keeping bfloat16 allows "
                          "(largest relative difference %.3g %%).\n",
                          100 * check.tolerance, 100 * check.maxRelativeDifference);
            out += text;
        } else
            out += check.agree ? "Gradients agree with the baseline's.\n"
                               : "Gradients differ from the baseline's (largest relative difference "
                                     + std::to_string(check.maxRelativeDifference) + ").\n";
    }
    if (!row.outcome.empty())
        out += "Out of memory: " + row.outcome + "\n";
    out += "Traces: " + measured.tracePath + (baselineMeasured.tracePath.empty() ? "" : ", " + baselineMeasured.tracePath) + "\n";
    return out;
}

json jsonOutput(const std::string &path, const CostModel &model, const RerunRow &row)
{
    const ReplayResult &measured = row.measured;
    const auto &change = row.stepChange().measured;
    const auto error = row.peakErrorPercent();
    return {{"trace", path},
            {"strategy", row.strategy.toString()},
            {"checkpoint", row.strategy.unitTexts()},
            {"predicted",
             {{"peak_bytes", row.predicted.peakBytes},
              {"step_time_ms", milliseconds(row.predicted.stepTimeNs)},
              {"step_time_spread_ms", milliseconds(row.stepSpreadNs)}}},
            {"measured", measuredJson(measured)},
            {"baseline",
             {{"predicted",
               {{"peak_bytes", row.modelBaseline.peakBytes},
                {"step_time_ms", milliseconds(row.modelBaseline.stepTimeNs)},
                {"step_time_spread_ms", milliseconds(model.stepTimeSpreadNs)}}},
              {"measured", measuredJson(measured.baseline.value_or(ReplaySteps()))}}},
            {"peak_error_percent", error ? json(*error) : json(nullptr)},
            {"step_time_change", change ? json{{"percent", change->changePercent},
                                               {"low_percent", change->lowPercent},
                                               {"high_percent", change->highPercent},
                                               {"paired", change->paired},
                                               {"within_noise", change->withinNoise()}}
                                        : json(nullptr)},
            {"gradients", measured.gradients ? json{{"agree", measured.gradients->agree},
                                                    {"max_relative_difference", measured.gradients->maxRelativeDifference},
                                                    {"tolerance", measured.gradients->tolerance}}
                                             : json(nullptr)},
            {"out_of_memory", row.outcome.empty() ? json(nullptr) : json(row.outcome)}};
}

} // namespace

Command addRerunCommand(CLI::App &app)
{
    auto *command = app.add_subcommand(
        "rerun", "Run a trace again with checkpoint toggles and compare the measured peak and step time with the prediction");
    auto options = std::make_shared<RerunOptions>();
    command->add_option("FILE", options->path, "Trace file: a replay's, or a recorded run's (its command is relaunched)")
        ->required();
    auto *checkpoint =
        command
            ->add_option("--checkpoint", options->checkpoint,
                         "none, all, every:K, segments:K, sqrt, or units NAME, FIRST..LAST, ... (docs/planning.md)")
            ->type_name("STRATEGY");
    auto *budget = command->add_option("--budget", options->budget, "Rerun the cheapest plan for this peak: 6GiB, or 70%")
                       ->type_name("SIZE");
    checkpoint->excludes(budget);
    command->add_option("--steps", options->steps, "Steps the replay measures, at least (a relaunched command runs its own)")
        ->check(wholeNumber(1, 100000));
    command->add_option("--out", options->out, "A new folder for the rerun's traces (default: peaklens-rerun-<pid>)");
    command->add_flag("--json", options->json, "Print one JSON object (see docs/cli.md)");
    // What `rerun ssh://HOST/PATH` runs on the host; not for people.
    command->add_flag("--send", options->send)->group("");
    return {command, [options, checkpoint, budget]() -> CommandOutput {
                if (!*checkpoint && !*budget)
                    throw Error("Say what to rerun: --checkpoint STRATEGY (every:2, all, ...) or --budget SIZE.");
                if (const auto remote = parseRemotePath(options->path))
                    return rerunOnHost(*options, *remote);
                // A copy of a trace recorded on a host is rerun where it was recorded.
                if (const auto origin = originOf(options->path); origin && !options->send) {
                    RerunOptions there = *options;
                    there.path = *origin;
                    return rerunOnHost(there, *parseRemotePath(*origin));
                }
                if (options->send)
                    return rerunSending(*options);
                const AnalysedTracePtr analysed = openForCommand(options->path);
                if (const auto reason = rerunUnavailable(*analysed->trace))
                    throw FileError(options->path, "cannot be rerun: " + *reason + ".");
                if (!analysed->model)
                    throw FileError(options->path, "cannot be planned: " + analysed->modelProblem);
                const CostModel &model = *analysed->model;
                Plan plan;
                if (*budget) {
                    const Budget target = Budget::parse(options->budget);
                    PlannerOptions planner;
                    planner.keepMargin = target.isLimit();
                    plan = planForBudget(model, target.bytes(model), planner);
                } else {
                    plan = planForStrategy(model, options->checkpoint);
                }
                const std::string strategy = strategyOf(model, plan).toString();
                const std::filesystem::path folder = outFolder(*options);
                const RerunPlan rerun =
                    planRerun(*analysed->trace, {strategy}, analysed->checkpoint, folder.string(), options->steps);
                for (const auto &[path, contents] : rerun.files) {
                    std::ofstream file(path);
                    if (!(file << contents))
                        throw FileError(path, "cannot be written.");
                }
                ReplayResult measured;
                if (rerun.relaunch) {
                    measured.baseline = runRelaunch(rerun.launches[0], rerun.rank, "with the baseline's toggles");
                    static_cast<ReplaySteps &>(measured) = runRelaunch(rerun.launches[1], rerun.rank, "with " + strategy);
                    measured.gradients =
                        relaunchedGradients(measured.baseline->tracePath, measured.tracePath, gradientTolerance(plan.schedule));
                } else {
                    measured = runReplay(rerun.launches[0], folder);
                }
                const RerunRow row = rerunRow(model, strategyOf(model, plan), std::move(measured));
                const int code = !row.outcome.empty() ? 3 : row.measured.gradients && !row.measured.gradients->agree ? 4 : 0;
                if (options->json)
                    return {dumpJson(jsonOutput(options->path, model, row)) + "\n", code};
                return {textOutput(model, row), code};
            }};
}

} // namespace peaklens::cli
