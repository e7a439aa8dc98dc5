// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chooses which chain layers to checkpoint. planForBudget finds, exactly, the set with
// the least added time whose predicted peak fits a budget (a dynamic programme over the
// bytes freed so far, O(N·S), each layer run plainly, whole or with some of its parts
// checkpointed), or the segments and multi-level schedules that beat it; the other plans
// are built on it.

#include "checkpointstrategy.h"
#include "predictor.h"

#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct Plan
{
    CheckpointSchedule schedule;  // units over chain indices
    std::vector<bool> checkpoint; // per chain layer: whether a top-level unit holds it
    Prediction prediction;
    bool feasible = true; // false: nothing fits; this is the lowest peak reachable
    // For a budget: how far below it the plan was made to stay, for what the model does not see.
    std::int64_t marginBytes = 0;
    // For a budget: the added time of the next cheapest plan that fits. Closer to this
    // plan's than the step-time spread, the ranking is within the trace's noise.
    std::optional<std::int64_t> runnerUpAddedNs;
    bool rankedWithinNoise(const CostModel &model) const
    {
        return runnerUpAddedNs && *runnerUpAddedNs - prediction.addedTimeNs < model.stepTimeSpreadNs;
    }
};

struct PlannerOptions
{
    // Largest number of states kept per layer (lowered on chains past 500 layers, to
    // 2M / N but no fewer than 256). Below it the plan is exact; above it states are
    // thinned, which can cost optimality but never the budget.
    std::size_t maxStates = 4096;
    // planForBudget stays budgetMargin() below a budget: a memory limit. Off for a budget
    // that is a trade-off rather than a limit (an activation budget).
    bool keepMargin = true;
    // Segments and multi-level schedules are searched with memory counted in this many
    // slots of the highest level (schedulesearch.h), then, where the slots leave the best
    // schedule unsettled, eight times finer each time while within finestSlots.
    std::size_t memorySlots = 1024;
    std::size_t finestSlots = std::size_t(1) << 14;
    // Also weigh, per chain layer, checkpointing it with a per-op policy (saving some of its
    // operators' outputs): the operators ranked by recompute spared per byte kept, each
    // leading run of them one choice. Their time comes from allocation times, which on a
    // GPU mark launches rather than kernels, so it is asked for (plan --per-op).
    bool perOpPolicies = false;
    // Also weigh, per chain layer, offloading what it keeps for backward to host memory (no
    // recompute; its copies' time at the model's host bandwidth, plan --offload).
    bool offload = false;
};

// The margin a plan for `budgetBytes` keeps below it, for what the model knows it cannot
// predict: 2.5 % of the budget where the trace's backward spans were estimated (imported
// without PeakLens's helper). Where they were measured the model is exact and keeps none.
std::int64_t budgetMargin(const CostModel &model, std::int64_t budgetBytes);
// The cheapest plan predicted to stay within the budget less its margin.
Plan planForBudget(const CostModel &model, std::int64_t budgetBytes, const PlannerOptions &options = {});
// The lowest predicted peak whose added time stays within fraction * measured step time.
Plan planForOverhead(const CostModel &model, double fraction, const PlannerOptions &options = {});
// The lowest peak any set of checkpoints reaches (and the cheapest set that reaches it).
Plan lowestPeakPlan(const CostModel &model, const PlannerOptions &options = {});

// A strategy over the chain (checkpointstrategy.h); its named layers must be chain layers.
// Throws Error for anything else.
Plan planForStrategy(const CostModel &model, const CheckpointStrategy &strategy);
Plan planForStrategy(const CostModel &model, const std::string &strategy);

// The chain layers' paths, in order, and per layer its parts' paths.
std::vector<std::string> chainPaths(const CostModel &model);
LayerParts chainParts(const CostModel &model);
// A plan's schedule written out over the chain's paths.
CheckpointStrategy strategyOf(const CostModel &model, const Plan &plan);
// Its units one by one ("blocks.0..blocks.3(blocks.0)", "blocks.5", "blocks.6.attn"): the
// list every command prints, which passed back as toggles is the same plan.
std::vector<std::string> toggles(const CostModel &model, const Plan &plan);
// The paths of the chain layers a toggle vector checkpoints, in chain order.
std::vector<std::string> checkpointedPaths(const CostModel &model, const std::vector<bool> &checkpoint);
// The paths of the layers (held by any top-level unit) and parts a schedule checkpoints, in chain order.
std::vector<std::string> checkpointedPaths(const CostModel &model, const CheckpointSchedule &schedule);
// Exactly these units (as toggles() lists them: layers, parts, segments). Throws Error
// naming a unit outside the grammar or the chain.
Plan planForToggles(const CostModel &model, const std::vector<std::string> &units);
// Peak against step time over budgets from the lowest reachable peak to the measured one;
// distinct plans only, lowest peak first.
std::vector<Plan> paretoSweep(const CostModel &model, std::size_t budgets = 24, const PlannerOptions &options = {});

} // namespace peaklens
