// SPDX-License-Identifier: Apache-2.0
#include "core/plan/rerunlaunch.h"

#include "core/trace/metadata.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

namespace peaklens {

namespace {

// Steps measured beside the baseline's, at least: with 10 pairs, all of them agreeing in
// sign by chance has a probability of 2 in 1,000, so a change no larger than the noise
// shows as noise.
constexpr int kMinPairs = 10;

// The recorded command line (meta "command", a JSON array of strings), empty when none.
std::vector<std::string> commandOf(const Trace &trace)
{
    std::vector<std::string> command;
    const nlohmann::json parsed = nlohmann::json::parse(trace.metaValue(metakey::Command), nullptr, false);
    if (!parsed.is_array())
        return {};
    for (const nlohmann::json &argument : parsed) {
        if (!argument.is_string())
            return {};
        command.push_back(argument.get<std::string>());
    }
    return command;
}

std::string path(const std::string &folder, const std::string &name)
{
    return (std::filesystem::path(folder) / name).string();
}

RerunLaunch replayLaunch(const Trace &trace, const std::vector<std::string> &toggles, const std::vector<std::string> &baseline,
                         const std::string &spec, const std::string &out, int steps)
{
    RerunLaunch launch;
    launch.program = "peaklens-replay";
    launch.arguments = {
        "--model", spec, "--checkpoint", togglesArgument(toggles), "--baseline", togglesArgument(baseline), "--json",
        "--out",   out};
    if (!toggles.empty())
        launch.arguments.push_back("--verify-gradients");
    // Same warm-up, device and precision as the trace being compared with.
    nlohmann::json options = nlohmann::json::parse(trace.metaValue(metakey::ReplayOptions), nullptr, false);
    if (!options.is_object())
        options = nlohmann::json::object();
    const int recorded = options.value("steps", nlohmann::json()).is_number_integer() ? options["steps"].get<int>() : 0;
    launch.arguments.insert(launch.arguments.end(), {"--steps", std::to_string(std::max({recorded, steps, kMinPairs}))});
    const std::pair<const char *, const char *> flags[] = {
        {"warmup", "--warmup"}, {"dtype", "--dtype"}, {"micro_batches", "--micro-batches"}};
    for (const auto &[key, flag] : flags) {
        const auto value = options.find(key);
        if (value == options.end())
            continue;
        if (value->is_string())
            launch.arguments.insert(launch.arguments.end(), {flag, value->get<std::string>()});
        else if (value->is_number_integer())
            launch.arguments.insert(launch.arguments.end(), {flag, std::to_string(value->get<std::int64_t>())});
    }
    if (const auto device = options.find("device"); device != options.end() && device->is_string())
        launch.arguments.insert(launch.arguments.end(),
                                {"--device", device->get<std::string>().starts_with("cuda") ? "cuda" : "cpu"});
    return launch;
}

// `peaklens-cli record` as the trace was recorded: its backend, and the collector's allocator.
std::vector<std::string> recordArguments(const Trace &trace, const std::string &out)
{
    std::vector<std::string> arguments{"record"};
    if (trace.metaValue(metakey::SourceFormat) == "torch") {
        arguments.insert(arguments.end(), {"--backend", "torch"});
    } else {
        const std::string allocator = trace.metaValue(metakey::AllocatorMode);
        arguments.insert(arguments.end(), {"--backend", "cupti", "--allocator", allocator.empty() ? "exact" : allocator});
    }
    arguments.insert(arguments.end(), {"--out", out, "--"});
    return arguments;
}

} // namespace

std::optional<std::string> rerunUnavailable(const Trace &trace)
{
    if (const std::string sharding = trace.metaValue(metakey::Sharding); !sharding.empty())
        return "it is " + sharding + ", predicted rather than recorded; rerun the file as it was opened";
    if (trace.metaValue(metakey::ReplaySpec).empty() && commandOf(trace).empty())
        return "it has neither a replay spec nor a recorded command, so there is nothing to rerun";
    return std::nullopt;
}

std::string togglesArgument(const std::vector<std::string> &units)
{
    std::string text;
    for (const std::string &unit : units)
        text += (text.empty() ? "" : ",") + unit;
    return text.empty() ? "none" : text;
}

RerunPlan planRerun(const Trace &trace, const std::vector<std::string> &toggles, const std::vector<std::string> &baseline,
                    const std::string &folder, int steps)
{
    RerunPlan plan;
    const std::string spec = trace.metaValue(metakey::ReplaySpec);
    plan.relaunch = spec.empty();
    if (!plan.relaunch) {
        const std::string specPath = path(folder, "spec.json");
        plan.files.emplace_back(specPath, spec);
        plan.runTrace = path(folder, "run.peaklens");
        plan.launches.push_back(replayLaunch(trace, toggles, baseline, specPath, plan.runTrace, steps));
        return plan;
    }
    plan.rank = trace.metaValue(metakey::Rank);
    const std::vector<std::string> command = commandOf(trace);
    const std::pair<const char *, const std::vector<std::string> *> runs[] = {{"baseline", &baseline}, {"run", &toggles}};
    for (const auto &[label, units] : runs) {
        RerunLaunch launch;
        launch.program = "peaklens-cli";
        launch.traceFolder = path(folder, label);
        launch.arguments = recordArguments(trace, launch.traceFolder);
        launch.arguments.insert(launch.arguments.end(), command.begin(), command.end());
        launch.environment = {{"PEAKLENS_CHECKPOINT", togglesArgument(*units)}, {"PEAKLENS_GRADIENTS", "1"}};
        launch.workingDirectory = trace.metaValue(metakey::WorkingDirectory);
        plan.launches.push_back(std::move(launch));
    }
    return plan;
}

namespace {

// name -> (norm, sum) from the file beside `trace`; empty when there is none or it is damaged.
std::map<std::string, std::pair<double, double>> gradientsBeside(const std::string &trace)
{
    std::map<std::string, std::pair<double, double>> gradients;
    std::filesystem::path file(trace);
    file.replace_extension(".gradients.json");
    std::ifstream in(file);
    if (!in)
        return gradients;
    const nlohmann::json parsed = nlohmann::json::parse(in, nullptr, false);
    if (!parsed.is_object() || parsed.value("format", "") != "peaklens-gradients" || !parsed.contains("parameters")
        || !parsed["parameters"].is_object())
        return gradients;
    for (const auto &[name, value] : parsed["parameters"].items()) {
        if (value.is_array() && value.size() == 2 && value[0].is_number() && value[1].is_number())
            gradients[name] = {value[0].get<double>(), value[1].get<double>()};
    }
    return gradients;
}

double relativeDifference(double a, double b)
{
    const double scale = std::max({std::abs(a), std::abs(b), 1e-12});
    return std::abs(a - b) / scale;
}

} // namespace

double gradientTolerance(const CheckpointSchedule &schedule)
{
    const bool lossy =
        std::any_of(schedule.begin(), schedule.end(), [](const CheckpointUnit &unit) { return unit.kept == KeptForm::Bfloat16; });
    return lossy ? kBfloat16GradientTolerance : kGradientTolerance;
}

std::optional<ReplayGradientCheck> relaunchedGradients(const std::string &baselineTrace, const std::string &runTrace,
                                                       double tolerance)
{
    const auto baseline = gradientsBeside(baselineTrace);
    const auto run = gradientsBeside(runTrace);
    if (baseline.empty() || run.empty())
        return std::nullopt;
    ReplayGradientCheck check;
    check.tolerance = tolerance;
    for (const auto &[name, figures] : baseline) {
        const auto other = run.find(name);
        if (other == run.end()) {
            check.agree = false; // a gradient the rerun never computed
            continue;
        }
        // The norm is compared relatively; a sum near zero, against the norm.
        const double norm = relativeDifference(figures.first, other->second.first);
        const double sum = std::abs(figures.second - other->second.second) / std::max(figures.first, 1e-12);
        if (std::max(norm, sum) > check.maxRelativeDifference || check.worstParameter.empty()) {
            check.maxRelativeDifference = std::max({check.maxRelativeDifference, norm, sum});
            check.worstParameter = name;
        }
    }
    check.agree = check.agree && run.size() == baseline.size() && check.maxRelativeDifference <= tolerance;
    return check;
}

std::optional<std::string> relaunchedTrace(const std::string &folder, const std::string &rank)
{
    std::vector<std::string> traces;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
        if (entry.path().extension() == ".peaklens")
            traces.push_back(entry.path().filename().string());
    }
    if (traces.empty())
        return std::nullopt;
    std::sort(traces.begin(), traces.end());
    const std::string sameRank = "rank" + rank + "-";
    const auto found = std::find_if(traces.begin(), traces.end(),
                                    [&](const std::string &name) { return !rank.empty() && name.starts_with(sameRank); });
    return path(folder, found == traces.end() ? traces.front() : *found);
}

} // namespace peaklens
