// SPDX-License-Identifier: Apache-2.0
#include "reportdata.h"

#include "core/error.h"
#include "core/plan/checkpointstrategy.h"
#include "core/trace/units.h"

#include <algorithm>

namespace peaklens {

namespace {

ReportRun planned(const ReportInput &input, std::optional<std::int64_t> budget)
{
    ReportRun run{input.name, input.analysed, {}, input.measured};
    if (!input.analysed->model)
        return run;
    const CostModel &model = *input.analysed->model;
    for (const CheckpointStrategy &strategy : CheckpointStrategy::presets())
        run.plans.push_back({strategy.toString(), planForStrategy(model, strategy)});
    const std::int64_t target = budget ? *budget : static_cast<std::int64_t>(static_cast<double>(model.measuredPeakBytes) * 0.75);
    run.plans.push_back({"cheapest within " + formatBytes(target), planForBudget(model, target)});
    run.plans.push_back({"lowest reachable peak", lowestPeakPlan(model)});
    return run;
}

} // namespace

ReportData buildReport(const std::vector<std::pair<std::string, TracePtr>> &traces, std::optional<std::int64_t> budget)
{
    std::vector<ReportInput> inputs;
    inputs.reserve(traces.size());
    for (const auto &[path, trace] : traces)
        inputs.push_back({path, analyseTrace(path, trace), std::nullopt});
    return buildReport(inputs, budget);
}

ReportData buildReport(const std::vector<ReportInput> &inputs, std::optional<std::int64_t> budget)
{
    ReportData data;
    data.budgetBytes = budget;
    for (const ReportInput &input : inputs)
        data.runs.push_back(planned(input, budget));
    for (std::size_t i = 1; i < data.runs.size(); ++i) {
        ReportComparison comparison;
        comparison.run = i;
        const ReportRun &baseline = data.runs.front();
        if (!baseline.analysed->model) {
            comparison.problem = "the baseline has no checkpointable chain";
        } else {
            try {
                const ReportRun &run = data.runs[i];
                comparison.row = rerunRow(*baseline.analysed->model, CheckpointStrategy::ofUnitTexts(run.analysed->checkpoint),
                                          run.measured.value_or(ReplayResult()));
            } catch (const Error &error) {
                comparison.problem = error.what();
            }
        }
        data.comparisons.push_back(std::move(comparison));
    }
    return data;
}

} // namespace peaklens
