// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a report says about one or more traces, computed once for every output format:
// per trace its summary, timeline, checkpoint plans (strategies and the planner's optimum
// for a budget); and, when several traces are given, each later one compared with the
// first: the predicted effect of its toggles against what it measured.

#include "core/document/analysedtrace.h"
#include "core/plan/planner.h"
#include "core/plan/replayresult.h"
#include "core/plan/rerunrow.h"

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
    std::string name;          // what the report calls it: its file, or a rerun's label
    AnalysedTracePtr analysed; // the same figures the app shows
    std::vector<ReportPlan> plans;
    // A rerun's measurement, with the baseline's toggles measured again beside it: the
    // step-time change is read against that, not against the trace's own figure.
    std::optional<ReplayResult> measured;
};

struct ReportComparison
{
    std::size_t run = 0;         // index into runs, > 0
    std::optional<RerunRow> row; // the run against the baseline model's prediction, when its toggles are in the chain
    std::string problem;         // why there is no prediction
};

struct ReportData
{
    std::vector<ReportRun> runs; // the first is the baseline
    std::optional<std::int64_t> budgetBytes;
    std::vector<ReportComparison> comparisons;
};

struct ReportInput
{
    std::string name;
    AnalysedTracePtr analysed;
    std::optional<ReplayResult> measured;
};

// `budget`: the planner's optimum is for it; unset, for 75 % of the measured peak. The
// first input is the baseline.
ReportData buildReport(const std::vector<ReportInput> &inputs, std::optional<std::int64_t> budget);
// The same for traces not analysed yet, each named by its path.
ReportData buildReport(const std::vector<std::pair<std::string, TracePtr>> &traces, std::optional<std::int64_t> budget);

} // namespace peaklens
