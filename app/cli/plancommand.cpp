// SPDX-License-Identifier: Apache-2.0
// peaklens-cli plan FILE (--budget B | --overhead X% | --strategy S | --checkpoint NAMES) [--layers REGEX]
//                  [--per-op] [--offload] [--shard-degree N [--zero-stage S]] [--activations]
//                  [--json | --emit python]
// peaklens-cli pareto FILE [--layers REGEX] [--per-op] [--offload] [--shard-degree N] [--json]
// What to checkpoint, and what it would cost and save, predicted from the trace.

#include "command.h"
#include "commandtrace.h"
#include "textoutput.h"

#include "core/document/analysedtrace.h"
#include "core/error.h"
#include "core/plan/activationlist.h"
#include "core/plan/batchscaling.h"
#include "core/plan/budget.h"
#include "core/plan/planner.h"
#include "core/plan/plannotes.h"
#include "core/plan/pythonplan.h"
#include "core/plan/sharding.h"
#include "core/report/jsondump.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <memory>

namespace peaklens::cli {

namespace {

using json = nlohmann::ordered_json;

double milliseconds(std::int64_t ns)
{
    return static_cast<double>(ns) / 1e6;
}

json planJson(const CostModel &model, const Plan &plan)
{
    const Prediction baseline = predict(model, CheckpointSchedule{});
    return {{"checkpoint", toggles(model, plan)},
            {"strategy", strategyOf(model, plan).toString()},
            {"feasible", plan.feasible},
            {"margin_bytes", plan.marginBytes},
            {"predicted",
             {{"peak_bytes", plan.prediction.peakBytes},
              {"peak_time_ns", plan.prediction.peakTimeNs},
              {"peak_phase", phaseName(plan.prediction.peakPhase)},
              {"peak_in_recompute_of",
               plan.prediction.peakInRecomputeOf ? json(model.layers[*plan.prediction.peakInRecomputeOf].path) : json(nullptr)},
              {"step_time_ms", milliseconds(plan.prediction.stepTimeNs)},
              {"step_time_spread_ms", milliseconds(model.stepTimeSpreadNs + plan.prediction.addedTimeSpreadNs)},
              {"added_time_ms", milliseconds(plan.prediction.addedTimeNs)},
              {"added_time_spread_ms", milliseconds(plan.prediction.addedTimeSpreadNs)}}},
            {"notes", planNotes(model, plan.schedule, plan.prediction)},
            {"runner_up_added_ms", plan.runnerUpAddedNs ? json(milliseconds(*plan.runnerUpAddedNs)) : json(nullptr)},
            {"ranked_within_noise", plan.rankedWithinNoise(model)},
            {"baseline",
             {{"peak_bytes", baseline.peakBytes},
              {"step_time_ms", milliseconds(baseline.stepTimeNs)},
              {"step_time_spread_ms", milliseconds(model.stepTimeSpreadNs)}}}};
}

json chainJson(const CostModel &model)
{
    json layers = json::array();
    for (const ChainLayer &layer : model.layers) {
        layers.push_back(
            {{"name", layer.path},
             {"retained_bytes", layer.retainedBytes},
             {"output_bytes", layer.outputBytes},
             {"saving_bytes", layer.savingBytes},
             {"kept_bytes", layer.keptBytes},
             {"regenerated_bytes", layer.regeneratedBytes},
             {"held_in_backward_bytes", layer.heldInBackwardBytes},
             {"forward_rise_bytes", layer.forwardRiseBytes},
             {"recompute_peak_bytes", layer.recomputePeakBytes},
             {"backward_peak_bytes", layer.backwardPeakBytes},
             {"forward_ms", milliseconds(layer.forwardNs)},
             {"backward_ms", milliseconds(layer.backwardNs)},
             {"recompute_ms", milliseconds(layer.recomputeNs)},
             {"warm_up_forward_ms", layer.outlierForwardNs ? json(milliseconds(*layer.outlierForwardNs)) : json(nullptr)},
             {"warm_up_backward_ms", layer.outlierBackwardNs ? json(milliseconds(*layer.outlierBackwardNs)) : json(nullptr)}});
        json parts = json::array();
        for (const ChainPart &part : layer.parts) {
            parts.push_back({{"name", part.path},
                             {"saving_bytes", part.savingBytes},
                             {"held_in_backward_bytes", part.heldInBackwardBytes},
                             {"forward_ms", milliseconds(part.forwardNs)},
                             {"recompute_ms", milliseconds(part.recomputeNs)}});
        }
        layers.back()["parts"] = std::move(parts);
        json operators = json::array();
        for (const OperatorOutputs &op : layer.operators.outputs)
            operators.push_back(
                {{"operator", op.op}, {"output_bytes", op.bytes}, {"calls", op.calls}, {"ms", milliseconds(op.ns)}});
        layers.back()["operators"] = std::move(operators);
    }
    return {{"device", model.device.toString()},
            {"step", model.step ? json(*model.step) : json(nullptr)},
            {"passes", model.passes},
            {"recompute_measured", model.recomputeMeasured},
            {"backward_estimated", model.backwardEstimated},
            {"layers", layers}};
}

// `baseline` names what the plan is compared with: the measured step, or for a batch the
// trace did not run, the prediction without checkpoints.
std::string planText(const CostModel &model, const Plan &plan, const std::string &goal, const std::string &baseline = "measured")
{
    const Prediction plain = predict(model, CheckpointSchedule{});
    std::string out = goal + "\n";
    if (!plan.feasible)
        out += "No set of checkpoints fits: this is the lowest peak the chain can reach.\n";
    const auto paths = checkpointedPaths(model, plan.checkpoint);
    std::string list;
    for (const std::string &path : paths)
        list += (list.empty() ? "" : ", ") + path;
    if (isPerLayer(plan.schedule))
        out +=
            "Checkpoint      "
            + (paths.empty() ? std::string("nothing")
                             : std::to_string(paths.size()) + " of " + std::to_string(model.layers.size()) + " layers: " + list)
            + "\n";
    else {
        const auto count = [&](auto which) {
            return static_cast<std::size_t>(std::count_if(plan.schedule.begin(), plan.schedule.end(), which));
        };
        const std::size_t parts = count([](const CheckpointUnit &unit) { return unit.isPart(); });
        const std::size_t plain = count([](const CheckpointUnit &unit) { return unit.runsPlainly(); });
        out += "Checkpoint      " + std::to_string(paths.size()) + " of " + std::to_string(model.layers.size()) + " layers"
               + (parts ? " and " + std::to_string(parts) + (parts == 1 ? " module" : " modules") + " inside layers" : "")
               + (plain ? ", " + std::to_string(plain) + (plain == 1 ? " layer" : " layers") + " kept elsewhere" : "") + " in "
               + std::to_string(plan.schedule.size()) + " units: " + strategyOf(model, plan).toString() + "\n";
    }
    out += "Peak            " + formatBytes(plan.prediction.peakBytes) + " predicted, " + formatBytes(plain.peakBytes) + " "
           + baseline + " ("
           + percent(static_cast<double>(plan.prediction.peakBytes - plain.peakBytes), static_cast<double>(plain.peakBytes))
           + ")\n";
    const auto spread = [](std::int64_t ns) { return ns > 0 ? " ± " + formatDuration(ns) : std::string(); };
    out += "Step time       " + formatDuration(plan.prediction.stepTimeNs)
           + spread(model.stepTimeSpreadNs + plan.prediction.addedTimeSpreadNs) + " predicted, "
           + formatDuration(plain.stepTimeNs) + spread(model.stepTimeSpreadNs) + " measured (+"
           + formatDuration(plan.prediction.addedTimeNs) + ", +"
           + percent(static_cast<double>(plan.prediction.addedTimeNs), static_cast<double>(plain.stepTimeNs)) + ")\n";
    if (plan.rankedWithinNoise(model))
        out += "The next cheapest plan that fits adds only " + formatDuration(*plan.runnerUpAddedNs - plan.prediction.addedTimeNs)
               + " more, less than the steps' spread (±" + formatDuration(model.stepTimeSpreadNs)
               + "): which is faster cannot be told from this trace; rerun both.\n";
    if (plan.marginBytes > 0)
        out += "Margin          the plan stays " + formatBytes(plan.marginBytes)
               + " below the budget: the trace ranged no backward for some layers, and their backward spans were estimated\n";
    for (const std::string &note : planNotes(model, plan.schedule, plan.prediction))
        out += note + "\n";
    return out;
}

json activationsJson(const std::vector<KeptActivation> &list)
{
    json rows = json::array();
    for (const KeptActivation &row : list)
        rows.push_back({{"layer", row.layer},
                        {"policy", keptPolicyName(row.policy)},
                        {"unit", row.unit.empty() ? json(nullptr) : json(row.unit)},
                        {"bytes", row.bytes},
                        {"output", row.output},
                        {"operator", row.op.empty() ? json(nullptr) : json(row.op)},
                        {"module", row.module.empty() ? json(nullptr) : json(row.module)},
                        {"site", row.site},
                        {"event", row.event}});
    return rows;
}

std::string activationsText(const std::vector<KeptActivation> &list)
{
    const KeptTotals totals = keptTotals(list);
    TextTable table({"layer", "policy", "bytes", "operator", "made in", "allocated at"}, {false, false, true});
    for (const KeptActivation &row : list) {
        table.addRow({visibleText(row.layer), visibleText(policyText(row)), formatBytes(row.bytes),
                      row.op.empty() ? "-" : visibleText(row.op), row.module.empty() ? "-" : visibleText(row.module),
                      visibleText(row.site)});
    }
    return "\nKept for backward in the measured step: " + formatBytes(totals.bytes) + " in " + std::to_string(list.size())
           + " blocks; " + keptTotalsText(totals) + "\n" + table.toString();
}

struct PlanOptions
{
    std::string path;
    std::string budget;
    double activationBudget = 1;
    bool maxBatch = false;
    std::int64_t batch = 0;
    std::string overhead;
    std::string strategy;
    std::vector<std::string> checkpoint;
    std::string layers;
    bool json = false;
    std::string emit;
    bool activations = false;
    bool perOp = false;
    bool offload = false;
    double hostBandwidth = kHostBandwidthBytesPerSecond / 1e9; // GB/s
    int shardDegree = 1;
    int zeroStage = 3;
    std::string collectives; // gloo or nccl; default: the trace's device's
};

ChainSelection selectionOf(const PlanOptions &options)
{
    ChainSelection selection;
    if (!options.layers.empty())
        selection.layerPattern = options.layers;
    return selection;
}

// The process group's backend: as --collectives says, else gloo for a CPU trace, NCCL for a GPU's.
std::string collectivesOf(const PlanOptions &options, const CostModel &model)
{
    return !options.collectives.empty() ? options.collectives : gathersWithCopy(model.device) ? "gloo" : "nccl";
}

// The trace opened as the app opens it; with --shard-degree, as one rank of the sharded
// run would hold it. One whose layers cannot be planned (no chain) is a problem with that
// file: name it.
AnalysedTracePtr openPlannable(const PlanOptions &options)
{
    AnalysedTracePtr analysed = openForCommand(options.path, selectionOf(options));
    if (!analysed->model)
        throw FileError(options.path, "cannot be planned: " + analysed->modelProblem);
    if (options.shardDegree > 1) {
        Sharding sharding{options.shardDegree, options.zeroStage, collectivesOf(options, *analysed->model) == "gloo"};
        try {
            analysed = analyseTrace(options.path,
                                    std::make_shared<const Trace>(withSharding(*analysed->trace, selectionOf(options), sharding)),
                                    selectionOf(options));
        } catch (const Error &error) {
            throw FileError(options.path, std::string("cannot be sharded: ") + error.what());
        }
        if (!analysed->model)
            throw FileError(options.path, "cannot be planned as one rank: " + analysed->modelProblem);
    }
    return analysed;
}

// What a sharded plan is for, as its first line says: the rank's trace's own description.
std::string shardingText(const Trace &trace)
{
    std::string text = trace.metaValue(metakey::Sharding);
    if (text.empty())
        return {};
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    return text + "; times are the unsharded run's, without the collectives'\n";
}

// What a plan's peak is compared with: the traced step's, or one rank's of it sharded.
std::string baselineOf(const PlanOptions &options)
{
    return options.shardDegree > 1 ? "per rank without checkpoints" : "measured";
}

json shardingJson(const PlanOptions &options, const CostModel &model)
{
    if (options.shardDegree <= 1)
        return nullptr;
    return {{"degree", options.shardDegree}, {"zero_stage", options.zeroStage}, {"collectives", collectivesOf(options, model)}};
}

// --shard-degree and its companions, on plan and pareto alike.
void addShardingOptions(CLI::App *command, PlanOptions &options)
{
    auto *degree = command
                       ->add_option("--shard-degree", options.shardDegree,
                                    "Plan for one rank of N that shard the model (FSDP, ZeRO), from an unsharded run's trace")
                       ->check(CLI::Range(1, 1 << 20))
                       ->type_name("N");
    command
        ->add_option("--zero-stage", options.zeroStage,
                     "What the ranks divide: 1 optimizer state, 2 also gradients, 3 also parameters (FSDP; default)")
        ->check(CLI::Range(1, 3))
        ->needs(degree);
    command
        ->add_option("--collectives", options.collectives,
                     "The process group's backend: gloo copies each all-gather once more (default: gloo for a CPU trace, "
                     "nccl for a GPU's)")
        ->check(CLI::IsMember({"gloo", "nccl"}))
        ->needs(degree);
}

// plan --max-batch: the largest batch whose cheapest plan fits the budget.
std::string maxBatchOutput(const PlanOptions &options, const Budget &budget)
{
    const AnalysedTracePtr analysed = openPlannable(options);
    const Trace &trace = *analysed->trace;
    const ChainSelection selection = selectionOf(options);
    const CostModel &model = *analysed->model;
    const std::int64_t bytes = budget.bytes(model);
    std::optional<std::int64_t> traced = options.batch > 0 ? std::optional(options.batch) : tracedBatch(trace);
    const BatchFit fit = largestBatch(trace, selection, bytes, traced, budget.isLimit());
    const CostModel &scaled = fit.model;
    if (options.json) {
        json result = planJson(scaled, fit.plan);
        result["max_batch"] = {{"fits", fit.fits},
                               {"batch", fit.batch ? json(*fit.batch) : json(nullptr)},
                               {"traced_batch", traced ? json(*traced) : json(nullptr)},
                               {"factor", fit.factor},
                               {"budget_bytes", bytes}};
        result["chain"] = chainJson(scaled);
        result["sharding"] = shardingJson(options, model);
        return dumpJson(result) + "\n";
    }
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.2f", fit.factor);
    std::string out = shardingText(trace);
    if (!fit.fits)
        out += "Not even " + std::string(traced ? "a batch of 1" : "a hundredth of the traced batch") + " fits in "
               + budget.describe(bytes) + ".\n";
    else if (fit.batch)
        out += "Largest batch   " + std::to_string(*fit.batch) + " (traced: " + std::to_string(*traced) + ", x" + factor
               + ") within " + budget.describe(bytes) + "\n";
    else
        out += "Largest batch   x" + std::string(factor) + " the traced one within " + budget.describe(bytes)
               + " (pass --batch N for samples)\n";
    return out
           + planText(scaled, fit.plan, "Its cheapest checkpoints, with activations scaled to that batch:", "without checkpoints")
           + "Times are the traced batch's; a larger batch's step and recomputes take longer.\n";
}

} // namespace

Command addPlanCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("plan", "Which layers to checkpoint for a memory budget, a time overhead or a strategy");
    auto options = std::make_shared<PlanOptions>();
    command->add_option("FILE", options->path, "Trace file")->required();
    auto *budget = command->add_option("--budget", options->budget, "Peak to stay under: 6GiB, or 70% of the measured peak")
                       ->type_name("SIZE");
    auto *activationBudget = command->add_option("--activation-budget", options->activationBudget,
                                                 "Share of the freeable activation memory to keep, 0..1");
    auto *maxBatch = command->add_flag("--max-batch", options->maxBatch, "The largest batch that fits the budget");
    command->add_option("--batch", options->batch, "The traced batch, when the trace does not say (with --max-batch)")
        ->check(wholeNumber(1, kMaxTracedBatch));
    activationBudget->excludes(budget);
    auto *overhead =
        command->add_option("--overhead", options->overhead, "Added step time allowed, e.g. 10%")->type_name("PERCENT");
    auto *strategy =
        command
            ->add_option(
                "--strategy", options->strategy,
                "none, all, every:K, segments:K, sqrt, or units NAME, FIRST..LAST, FIRST..LAST(INNER,...) (docs/planning.md)")
            ->type_name("STRATEGY");
    auto *checkpoint = command
                           ->add_option("--checkpoint", options->checkpoint,
                                        "Predict exactly these units, as --strategy reads them: NAME,FIRST..LAST(INNER),...")
                           ->type_name("UNITS");
    budget->excludes(overhead)->excludes(strategy)->excludes(checkpoint);
    activationBudget->excludes(overhead)->excludes(strategy)->excludes(checkpoint);
    maxBatch->excludes(overhead)->excludes(strategy)->excludes(checkpoint);
    overhead->excludes(strategy)->excludes(checkpoint);
    strategy->excludes(checkpoint);
    command->add_option("--layers", options->layers, "Regular expression choosing the chain's layers")->type_name("REGEX");
    auto *jsonFlag = command->add_flag("--json", options->json, "Print one JSON object (see docs/cli.md)");
    auto *emit = command
                     ->add_option("--emit", options->emit,
                                  "Print the plan as code: python, a module whose apply(model) checkpoints its units")
                     ->check(CLI::IsMember({"python"}))
                     ->type_name("LANGUAGE")
                     ->excludes(jsonFlag)
                     ->excludes(maxBatch);
    auto *perOp = command->add_flag("--per-op", options->perOp,
                                    "Also weigh checkpointing a layer with a per-op policy that keeps some of its "
                                    "operators' outputs (blocks.3[save:aten.addmm.default])");
    perOp->excludes(strategy)->excludes(checkpoint)->excludes(maxBatch);
    command
        ->add_flag("--offload", options->offload,
                   "Also weigh offloading what a layer keeps for backward to host memory (blocks.3[offload]): no "
                   "recompute, its copies timed at --host-bandwidth")
        ->excludes(strategy)
        ->excludes(checkpoint)
        ->excludes(maxBatch);
    command
        ->add_flag("--activations", options->activations,
                   "List the blocks each chain layer keeps for backward, with what the plan does with each")
        ->excludes(maxBatch)
        ->excludes(emit);
    command
        ->add_option("--host-bandwidth", options->hostBandwidth,
                     "GB/s between host and device memory, one way, for layers offloaded (blocks.3[offload]); default "
                         + std::to_string(static_cast<int>(kHostBandwidthBytesPerSecond / 1e9)))
        ->check(CLI::Range(0.001, 1e6))
        ->type_name("GBPS");
    addShardingOptions(command, *options);
    return {command, [options, budget, activationBudget, maxBatch, overhead, strategy, checkpoint]() -> CommandOutput {
                if (*maxBatch && !*budget && !*activationBudget)
                    throw Error("--max-batch needs a budget: --budget 80GiB, --budget 90% or --activation-budget 0.5.");
                if (!*budget && !*activationBudget && !*overhead && !*strategy && !*checkpoint)
                    throw Error("Say what to plan for: --budget BYTES or PERCENT, --activation-budget SHARE, --overhead "
                                "PERCENT, --strategy NAME or --checkpoint NAME,NAME,...");
                std::optional<Budget> target;
                if (*budget)
                    target = Budget::parse(options->budget);
                else if (*activationBudget)
                    target = Budget::activationShare(options->activationBudget);
                if (*maxBatch)
                    return maxBatchOutput(*options, *target);
                const AnalysedTracePtr analysed = openPlannable(*options);
                CostModel model = *analysed->model;
                model.hostBandwidthBytesPerSecond = options->hostBandwidth * 1e9;
                Plan plan;
                std::string goal;
                PlannerOptions planner;
                planner.perOpPolicies = options->perOp;
                planner.offload = options->offload;
                if (target) {
                    planner.keepMargin = target->isLimit();
                    const std::int64_t bytes = target->bytes(model);
                    plan = planForBudget(model, bytes, planner);
                    goal = "Cheapest checkpoints for a peak of at most " + target->describe(bytes);
                } else if (*overhead) {
                    std::string text = options->overhead;
                    if (!text.empty() && text.back() == '%')
                        text.pop_back();
                    double percentValue = -1;
                    try {
                        percentValue = std::stod(text);
                    } catch (const std::exception &) {
                    }
                    if (!(percentValue >= 0))
                        throw Error("\"" + options->overhead + "\" is not an overhead; write it like 10%.");
                    plan = planForOverhead(model, percentValue / 100.0, planner);
                    goal = "Lowest peak for at most " + options->overhead + (options->overhead.ends_with('%') ? "" : "%")
                           + " more step time";
                } else if (*checkpoint) {
                    plan = planForToggles(model, options->checkpoint);
                    goal = "Checkpointing " + strategyOf(model, plan).toString();
                } else {
                    plan = planForStrategy(model, options->strategy);
                    goal = "Strategy " + options->strategy;
                }
                if (!options->emit.empty())
                    return pythonPlan(*analysed->trace, model, plan,
                                      "Trace: " + options->path + "\n" + shardingText(*analysed->trace)
                                          + planText(model, plan, goal, baselineOf(*options)));
                if (options->json) {
                    json result = planJson(model, plan);
                    result["sharding"] = shardingJson(*options, model);
                    // The layer of the allocation that reached the peak, as `summary` names it.
                    const std::vector<Layer> &layers = analysed->trace->layers;
                    const std::uint32_t peakLayer = analysed->summary.peakLayer;
                    result["baseline"]["peak_layer"] = peakLayer < layers.size() ? json(layers[peakLayer].path) : json(nullptr);
                    result["chain"] = chainJson(model);
                    if (options->activations)
                        result["activations"] = activationsJson(keptActivations(*analysed->trace, model, plan.schedule));
                    return dumpJson(result) + "\n";
                }
                const std::string text = shardingText(*analysed->trace) + planText(model, plan, goal, baselineOf(*options));
                if (options->activations)
                    return text + activationsText(keptActivations(*analysed->trace, model, plan.schedule));
                return text;
            }};
}

Command addParetoCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("pareto", "Peak against step time over memory budgets");
    auto options = std::make_shared<PlanOptions>();
    command->add_option("FILE", options->path, "Trace file")->required();
    command->add_option("--layers", options->layers, "Regular expression choosing the chain's layers")->type_name("REGEX");
    command->add_flag("--per-op", options->perOp, "Also weigh per-op policies, as plan --per-op does");
    command->add_flag("--offload", options->offload, "Also weigh offloading layers, as plan --offload does");
    command->add_option("--host-bandwidth", options->hostBandwidth, "GB/s between host and device memory, as plan takes it")
        ->check(CLI::Range(0.001, 1e6))
        ->type_name("GBPS");
    addShardingOptions(command, *options);
    command->add_flag("--json", options->json, "Print one JSON object (see docs/cli.md)");
    return {command, [options] {
                const AnalysedTracePtr analysed = openPlannable(*options);
                CostModel model = *analysed->model;
                model.hostBandwidthBytesPerSecond = options->hostBandwidth * 1e9;
                PlannerOptions planner;
                planner.perOpPolicies = options->perOp;
                planner.offload = options->offload;
                const std::vector<Plan> plans = paretoSweep(model, 24, planner);
                if (options->json) {
                    json list = json::array();
                    for (const Plan &plan : plans)
                        list.push_back(planJson(model, plan));
                    json result{{"chain", chainJson(model)}, {"sharding", shardingJson(*options, model)}};
                    result["plans"] = std::move(list);
                    return dumpJson(result) + "\n";
                }
                TextTable table({"peak", "step time", "added", "checkpointed"}, {true, true, true, true});
                // Neighbours closer in time than the steps' spread are marked: their order is noise.
                bool close = false;
                for (std::size_t i = 0; i < plans.size(); ++i) {
                    const Plan &plan = plans[i];
                    std::size_t count = 0;
                    for (bool on : plan.checkpoint)
                        count += on;
                    const auto policies = std::count_if(plan.schedule.begin(), plan.schedule.end(),
                                                        [](const CheckpointUnit &unit) { return !unit.saved.empty(); });
                    const auto offloaded = std::count_if(plan.schedule.begin(), plan.schedule.end(),
                                                         [](const CheckpointUnit &unit) { return unit.kept == KeptForm::Host; });
                    const bool near =
                        i > 0
                        && std::abs(plan.prediction.addedTimeNs - plans[i - 1].prediction.addedTimeNs) < model.stepTimeSpreadNs;
                    close = close || near;
                    table.addRow({formatBytes(plan.prediction.peakBytes), formatDuration(plan.prediction.stepTimeNs),
                                  (near ? "≈ +" : "+") + formatDuration(plan.prediction.addedTimeNs),
                                  std::to_string(count) + " of " + std::to_string(model.layers.size())
                                      + (policies ? ", " + std::to_string(policies) + " per-op" : std::string())
                                      + (offloaded ? ", " + std::to_string(offloaded) + " offloaded" : std::string())});
                }
                std::string out = shardingText(*analysed->trace) + "Peak against step time, "
                                  + std::to_string(model.layers.size()) + " checkpointable layers (" + model.layers.front().path
                                  + " ... " + model.layers.back().path + ")\n" + table.toString();
                if (close)
                    out += "≈: within the steps' spread (±" + formatDuration(model.stepTimeSpreadNs)
                           + ") of the plan above; their order in time is noise.\n";
                return out;
            }};
}

} // namespace peaklens::cli
