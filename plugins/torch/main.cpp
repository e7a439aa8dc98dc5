// SPDX-License-Identifier: Apache-2.0
// peaklens-replay: runs training steps of a built-in or TorchScript model with LibTorch,
// with per-layer activation checkpointing, and measures peak memory and step time.
// Exit codes: 0 measured, 2 bad spec or usage (one sentence on stderr), 3 out of memory,
// 4 --verify-gradients found gradients that differ.

#include "modelspec.h"
#include "replayrunner.h"
#include "torchcompat.h"

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/plan/steptimecomparison.h"
#include "core/trace/units.h"

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace {

using namespace peaklens;
using namespace peaklens::replay;

struct Arguments
{
    std::string model = "gpt";
    std::optional<std::int64_t> layers, dModel, heads, seq, vocab, batch;
    std::optional<double> dropout;
    std::optional<std::uint64_t> seed;
    std::string checkpoint = "none";
    std::optional<std::string> baseline;
    int steps = 5;
    int warmup = 2;
    int microBatches = 1;
    std::string device = "auto";
    std::string dtype = "fp32";
    std::string memoryLimit;
    std::string out;
    std::string progress = "stderr";
    bool json = false;
    bool force = false;
    bool quiet = false;
    bool verifyGradients = false;
    std::optional<int> calibrationSteps;
};

// The spec named by --model with the size options laid over it, checked again.
ModelSpec specFrom(const Arguments &arguments)
{
    const bool builtin = arguments.model == "gpt" || arguments.model == "mlp" || arguments.model == "cnn";
    const bool sized = arguments.layers || arguments.dModel || arguments.heads || arguments.seq || arguments.vocab
                       || arguments.batch || arguments.dropout;
    ModelSpec base = builtin ? builtinSpec(arguments.model) : readModelSpec(arguments.model);
    if (base.kind == ModelKind::TorchScript && sized)
        throw Error("--layers, --d-model, --heads, --seq, --vocab, --batch and --dropout apply to built-in models; "
                    "a TorchScript spec fixes them in its blocks and input.");
    if (!sized && !arguments.seed)
        return base;
    nlohmann::json object = base.toJson();
    auto set = [&](const char *key, const auto &value) {
        if (value)
            object[key] = *value;
    };
    set("layers", arguments.layers);
    set("d_model", arguments.dModel);
    set("heads", arguments.heads);
    set("seq", arguments.seq);
    set("vocab", arguments.vocab);
    set("batch", arguments.batch);
    set("dropout", arguments.dropout);
    set("seed", arguments.seed);
    return parseModelSpec(object, builtin ? "--model " + arguments.model : arguments.model, ".");
}

std::string gradientText(const GradientCheck &check)
{
    char buffer[160];
    if (check.maxAbsDifference == 0)
        std::snprintf(buffer, sizeof buffer, "identical with and without checkpointing, %s values",
                      formatCount(check.values).c_str());
    else
        std::snprintf(buffer, sizeof buffer, "largest difference %.3g (%.3g of the largest gradient, in %s) over %s values: %s",
                      check.maxAbsDifference, check.maxRelativeDifference, check.worstParameter.c_str(),
                      formatCount(check.values).c_str(), check.agree() ? "within rounding" : "THEY DIFFER");
    return "Gradients       " + std::string(buffer) + "\n";
}

std::string listText(const std::vector<std::string> &paths)
{
    std::string list;
    for (const std::string &path : paths)
        list += (list.empty() ? "" : ", ") + path;
    return list.empty() ? std::string("nothing") : list;
}

std::vector<double> measuredTimes(const std::vector<StepMeasure> &steps)
{
    std::vector<double> times;
    for (const StepMeasure &step : steps) {
        if (!step.warmup)
            times.push_back(step.timeMs);
    }
    return times;
}

// The baseline's figures, and the step time against it with the spread of the changes.
std::string baselineText(const RunResult &result)
{
    const BaselineResult &baseline = *result.baseline;
    std::string text = "Baseline        checkpoint " + listText(baseline.checkpoint);
    if (baseline.peakAllocatedBytes)
        text += ", peak allocated " + formatBytes(*baseline.peakAllocatedBytes);
    if (baseline.stepTimeMs) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, ", step time %.2f ms", *baseline.stepTimeMs);
        text += buffer;
    }
    if (baseline.oom)
        text += ", " + baseline.oom->message;
    text += "\n";
    if (const auto comparison = compareStepTimes(measuredTimes(baseline.steps), measuredTimes(result.steps))) {
        char buffer[200];
        std::snprintf(buffer, sizeof buffer, "Against it      step time %+.1f %% (%s from %+.1f %% to %+.1f %%, %zu steps)%s\n",
                      comparison->changePercent, comparison->paired ? "pairs" : "unpaired steps", comparison->lowPercent,
                      comparison->highPercent, comparison->run.samples, comparison->withinNoise() ? ": within noise" : "");
        text += buffer;
    }
    return text;
}

std::string summaryText(const RunResult &result, const std::string &out)
{
    std::string text =
        modelKindName(result.spec.kind) + " on " + result.device + " (" + result.deviceName + "), " + result.dtype + "\n";
    text += "Checkpoint      " + listText(result.checkpoint) + "\n";
    if (result.oom)
        text += "Out of memory   " + result.oom->message + " (asked for " + formatBytes(result.oom->requestedBytes) + ")\n";
    if (result.peakAllocatedBytes)
        text += "Peak allocated  " + formatBytes(*result.peakAllocatedBytes) + "\n";
    if (result.stepTimeMs) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.2f ms", *result.stepTimeMs);
        text += "Step time       " + std::string(buffer) + " (median of the measured steps)\n";
    }
    if (result.baseline)
        text += baselineText(result);
    if (!out.empty())
        text += "Trace           " + out + "\n";
    return text;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app("Replays training steps with LibTorch and per-layer activation checkpointing, "
                 "and measures peak memory and step time.",
                 "peaklens-replay");
    app.set_version_flag("--version",
                         std::string("peaklens-replay ") + PEAKLENS_VERSION + " (LibTorch " + compat::libtorchVersion() + ")");
    Arguments arguments;
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--model", arguments.model, "gpt, mlp, cnn, or a model spec SPEC.json (docs/replay.md)");
    app.add_option("--layers", arguments.layers, "Number of repeated blocks");
    app.add_option("--d-model", arguments.dModel, "Width of GPT and MLP layers");
    app.add_option("--heads", arguments.heads, "GPT attention heads");
    app.add_option("--seq", arguments.seq, "GPT sequence length");
    app.add_option("--vocab", arguments.vocab, "GPT vocabulary size");
    app.add_option("--batch", arguments.batch, "Batch size (per micro-batch)");
    app.add_option("--dropout", arguments.dropout, "Dropout probability");
    app.add_option("--seed", arguments.seed, "Seed of parameters, batch and dropout");
    app.add_option("--checkpoint", arguments.checkpoint,
                   "none, all, every:K, segments:K, sqrt, or units: NAME, FIRST..LAST, FIRST..LAST(UNIT,...), or a module inside "
                   "a block (blocks.3.attn)");
    app.add_option("--baseline", arguments.baseline,
                   "Also run each step with this strategy (as for --checkpoint), by turns before and after the "
                   "measured one, and compare step times and peaks measured side by side; not in the trace");
    app.add_option("--steps", arguments.steps, "Measured steps (after warm-up)")->check(CLI::Range(1, 100000));
    app.add_option("--warmup", arguments.warmup, "Warm-up steps, not measured")->check(CLI::Range(0, 100000));
    app.add_option("--micro-batches", arguments.microBatches, "Gradient accumulation: micro-batches per step")
        ->check(CLI::Range(1, 100000));
    app.add_option("--device", arguments.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--dtype", arguments.dtype, "fp32, or bf16 autocast")->check(CLI::IsMember({"fp32", "bf16"}));
    app.add_option("--memory-limit", arguments.memoryLimit,
                   "CPU: fail as out of memory beyond this many bytes (e.g. 6GiB); default 90% of available memory");
    app.add_option("--out", arguments.out, "Write the recorded trace to RUN.peaklens");
    app.add_flag("--force", arguments.force, "Replace the --out file if it exists");
    app.add_option("--progress", arguments.progress, "Where JSON-lines progress goes: stderr, none, or a file descriptor");
    app.add_flag("--json", arguments.json, "Print one JSON result object on stdout");
    app.add_option("--calibration-steps", arguments.calibrationSteps,
                   "Rounds after the measured steps of a plain step beside steps with every chain stage and every "
                   "module in it checkpointed, timing what each checkpoint adds for the planner (default 3 with "
                   "--out, else 0)")
        ->check(CLI::Range(0, 1000));
    app.add_flag("--verify-gradients", arguments.verifyGradients,
                 "Also run one step plain and one with the toggles, and compare every gradient");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &error) {
        return app.exit(error) == 0 ? 0 : 2;
    }

    try {
        RunOptions options;
        options.checkpoint = arguments.checkpoint;
        options.baseline = arguments.baseline;
        options.steps = arguments.steps;
        options.warmupSteps = arguments.warmup;
        options.microBatches = arguments.microBatches;
        options.device = arguments.device == "cpu"    ? DeviceChoice::Cpu
                         : arguments.device == "cuda" ? DeviceChoice::Cuda
                                                      : DeviceChoice::Auto;
        options.bf16 = arguments.dtype == "bf16";
        options.calibrationSteps = arguments.calibrationSteps.value_or(arguments.out.empty() ? 0 : 3);
        if (!arguments.memoryLimit.empty()) {
            options.memoryLimitBytes = parseBytes(arguments.memoryLimit);
            if (!options.memoryLimitBytes || *options.memoryLimitBytes <= 0)
                throw Error("--memory-limit: \"" + arguments.memoryLimit + "\" is not a size such as 6GiB or 512MiB.");
        }
        FILE *progress = nullptr;
        if (arguments.progress == "stderr") {
            progress = stderr;
        } else if (arguments.progress != "none") {
            char *end = nullptr;
            const long fd = std::strtol(arguments.progress.c_str(), &end, 10);
            if (end == arguments.progress.c_str() || *end || fd < 0 || !(progress = fdopen(static_cast<int>(fd), "w")))
                throw Error("--progress: \"" + arguments.progress + "\" is not stderr, none or an open file descriptor.");
        }
        if (progress) {
            options.progress = [progress](const nlohmann::json &line) {
                std::fputs((line.dump() + "\n").c_str(), progress);
                std::fflush(progress);
            };
        }
        if (!arguments.out.empty() && !arguments.out.ends_with(".peaklens"))
            throw Error("--out: \"" + arguments.out + "\" must end in .peaklens.");

        const ModelSpec spec = specFrom(arguments);
        if (!arguments.out.empty()) {
            std::error_code ignored;
            if (std::filesystem::exists(arguments.out, ignored) && !arguments.force)
                throw FileError(arguments.out, "already exists; pass --force to replace it.");
            // Replaced as the run starts: the new trace is written while the run goes.
            std::filesystem::remove(arguments.out, ignored);
            options.out = arguments.out;
        }
        // A run that fails leaves no half-written trace behind.
        struct Discard
        {
            std::string path;
            ~Discard()
            {
                std::error_code ignored;
                for (const char *suffix : {"", "-wal", "-shm"})
                    if (!path.empty())
                        std::filesystem::remove(path + suffix, ignored);
            }
        } discard{options.out};
        const RunResult result = runReplay(spec, options);
        discard.path.clear();
        std::optional<GradientCheck> check;
        if (arguments.verifyGradients && !result.oom)
            check = verifyGradients(spec, options);
        if (arguments.json) {
            std::cout << replayResultOf(result, check, arguments.out).toJson() << std::endl;
        } else {
            std::cout << summaryText(result, arguments.out) << (check ? gradientText(*check) : std::string()) << std::flush;
        }
        return result.oom ? 3 : check && !check->agree() ? 4 : 0;
    } catch (const peaklens::Error &error) {
        std::cerr << "peaklens-replay: " << error.what() << '\n';
    } catch (const c10::Error &error) {
        std::cerr << "peaklens-replay: " << errorText(error) << '\n';
    } catch (const std::bad_alloc &) {
        std::cerr << "peaklens-replay: out of memory.\n";
    }
    return 2;
}
