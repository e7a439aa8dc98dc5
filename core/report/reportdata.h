#pragma once
// What a report says about one or more traces, computed once for every output format:
// per trace its summary, timeline, checkpoint plans (strategies and the planner's optimum
// for a budget); and, when several traces are given, each later one compared with the
// first: the predicted effect of its toggles against what it measured.

#include "core/analysis/timelineseries.h"
#include "core/analysis/tracesummary.h"
#include "core/plan/planner.h"

#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct ReportPlan
{
    std::string name; // a preset strategy ("none", "every:2", ...), "cheapest within 6.000 GiB", ...
    Plan plan;
};

struct ReportRun
{
    std::string path;
    TracePtr trace;
    TraceSummary summary;
    TimelineSeries timeline;              // by category, on the peak's device
    std::optional<CostModel> model;
    std::string modelProblem;             // why there is no model
    std::vector<ReportPlan> plans;
    std::vector<std::string> checkpoint;  // the toggles the trace was recorded with
    std::int64_t peakBytes = 0;
    std::int64_t stepTimeNs = 0;          // median step (the cost model's), or the whole span
};

struct ReportComparison
{
    std::size_t run = 0;                        // index into runs, > 0
    std::optional<Prediction> predicted;        // from the baseline's model, when its toggles are in the chain
    std::vector<bool> toggles;                  // the run's toggles on the baseline's chain
    std::string problem;                        // why there is no prediction
};

struct ReportData
{
    std::vector<ReportRun> runs; // the first is the baseline
    std::optional<std::int64_t> budgetBytes;
    std::vector<ReportComparison> comparisons;
};

// `budget`: the planner's optimum is for it; unset, for 75 % of the measured peak.
ReportData buildReport(const std::vector<std::pair<std::string, TracePtr>> &traces,
                       std::optional<std::int64_t> budget);

} // namespace peaklens
