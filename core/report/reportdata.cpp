#include "reportdata.h"

#include "core/error.h"
#include "core/plan/checkpointstrategy.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <algorithm>

namespace peaklens {

namespace {

std::vector<std::string> splitList(const std::string &text)
{
    std::vector<std::string> parts;
    std::size_t begin = 0;
    while (begin < text.size()) {
        const std::size_t comma = std::min(text.find(',', begin), text.size());
        if (comma > begin)
            parts.push_back(text.substr(begin, comma - begin));
        begin = comma + 1;
    }
    return parts;
}

ReportRun analyse(const std::string &path, const TracePtr &trace, std::optional<std::int64_t> budget)
{
    ReportRun run;
    run.path = path;
    run.trace = trace;
    run.summary = summarize(*trace);
    const PeakReport &peaks = run.summary.peak;
    Device device;
    if (peaks.primary) {
        device = peaks.devices[*peaks.primary].device;
        run.peakBytes = peaks.devices[*peaks.primary].allocatedBytes;
    }
    run.timeline = buildTimeline(*trace, device, GroupBy::Category);
    try {
        run.checkpoint = CheckpointStrategy::parse(trace->metaValue(metakey::Checkpoint)).unitTexts();
    } catch (const Error &) {
        run.checkpoint = splitList(trace->metaValue(metakey::Checkpoint));
    }
    run.stepTimeNs = run.summary.lastNs - run.summary.firstNs;
    try {
        run.model = buildCostModel(*trace);
    } catch (const Error &error) {
        run.modelProblem = error.what();
    }
    if (!run.model)
        return run;
    const CostModel &model = *run.model;
    run.stepTimeNs = model.stepTimeNs;
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
    ReportData data;
    data.budgetBytes = budget;
    for (const auto &[path, trace] : traces)
        data.runs.push_back(analyse(path, trace, budget));
    for (std::size_t i = 1; i < data.runs.size(); ++i) {
        ReportComparison comparison;
        comparison.run = i;
        const ReportRun &baseline = data.runs.front();
        if (!baseline.model) {
            comparison.problem = "the baseline has no checkpointable chain";
        } else {
            try {
                const Plan plan = planForLayers(*baseline.model, data.runs[i].checkpoint);
                comparison.predicted = plan.prediction;
                comparison.toggles = plan.checkpoint;
            } catch (const Error &error) {
                comparison.problem = error.what();
            }
        }
        data.comparisons.push_back(std::move(comparison));
    }
    return data;
}

} // namespace peaklens
