// SPDX-License-Identifier: Apache-2.0
#include "headroom.h"

#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <cmath>

namespace peaklens {

std::optional<std::int64_t> deviceCapacity(const Trace &trace)
{
    const auto bytes = parseBytes(trace.metaValue(metakey::DeviceMemory));
    return bytes && *bytes > 0 ? bytes : std::nullopt;
}

bool nearCapacity(std::int64_t peakBytes, std::int64_t capacityBytes, double margin)
{
    return peakBytes > 0 && static_cast<double>(peakBytes) >= static_cast<double>(capacityBytes) * (1 - margin);
}

HeadroomAdvice adviseHeadroom(const CostModel &model, std::int64_t capacityBytes, double margin)
{
    HeadroomAdvice advice;
    advice.budgetBytes = static_cast<std::int64_t>(std::floor(static_cast<double>(capacityBytes) * (1 - margin)));
    advice.plan = planForBudget(model, advice.budgetBytes);
    advice.strategy = strategyOf(model, advice.plan).toString();
    return advice;
}

std::string HeadroomAdvice::sentence(const CostModel &model) const
{
    const std::vector<std::string> paths = checkpointedPaths(model, plan.schedule);
    std::string list;
    for (const std::string &path : paths)
        list += (list.empty() ? "" : ", ") + path;
    const std::string count = std::to_string(paths.size()) + " of " + std::to_string(model.layers.size()) + " layers";
    const std::string peak = formatBytes(plan.prediction.peakBytes);
    if (!plan.feasible)
        return "no checkpoint set keeps it under " + formatBytes(budgetBytes) + ": the lowest the model reaches is " + peak
               + (paths.empty() ? std::string() : ", checkpointing " + list + " (" + count + ")");
    if (paths.empty())
        return "the model of the steps recorded so far stays under " + formatBytes(budgetBytes) + " (" + peak
               + ") with no checkpoint";
    return "checkpointing " + list + " (" + count + ") would keep it to " + peak + " for +"
           + formatDuration(plan.prediction.addedTimeNs) + " a step";
}

} // namespace peaklens
