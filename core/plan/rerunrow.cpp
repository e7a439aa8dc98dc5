// SPDX-License-Identifier: Apache-2.0
#include "rerunrow.h"

#include "planner.h"

namespace peaklens {

std::optional<double> RerunRow::peakErrorPercent() const
{
    const std::optional<std::int64_t> &peak = measured.peakAllocatedBytes;
    if (!peak || *peak <= 0)
        return std::nullopt;
    return 100.0 * static_cast<double>(predicted.peakBytes - *peak) / static_cast<double>(*peak);
}

StepChange RerunRow::stepChange() const
{
    return peaklens::stepChange(predicted.stepTimeNs, modelBaseline.stepTimeNs, measured.baselineStepTimesMs(),
                                measured.stepTimesMs);
}

RerunRow rerunRow(const CostModel &model, const CheckpointStrategy &strategy, ReplayResult measured)
{
    RerunRow row;
    const Plan plan = planForStrategy(model, strategy);
    row.strategy = strategyOf(model, plan);
    row.schedule = plan.schedule;
    row.predicted = plan.prediction;
    row.modelBaseline = predict(model, CheckpointSchedule{});
    row.stepSpreadNs = model.stepTimeSpreadNs + plan.prediction.addedTimeSpreadNs;
    row.outcome = measured.outOfMemory();
    row.measured = std::move(measured);
    return row;
}

} // namespace peaklens
