// SPDX-License-Identifier: Apache-2.0
#include "calibrationrounds.h"

#include "core/analysis/median.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace peaklens::replay {

namespace {

// Per layer of `layers`, its forward and backward time in each step of `ranges`.
std::vector<std::vector<std::int64_t>> layerTimes(const std::vector<Range> &ranges, const std::vector<std::uint32_t> &layers)
{
    std::map<std::pair<std::uint32_t, std::int64_t>, std::int64_t> perStep; // (layer, step) -> ns
    for (const Range &range : ranges) {
        if (range.phase == Phase::Forward || range.phase == Phase::Backward)
            perStep[{range.layer, range.step}] += range.durationNs();
    }
    std::vector<std::vector<std::int64_t>> times(layers.size());
    for (std::size_t k = 0; k < layers.size(); ++k) {
        for (auto it = perStep.lower_bound({layers[k], INT64_MIN}); it != perStep.end() && it->first.first == layers[k]; ++it)
            times[k].push_back(it->second);
    }
    return times;
}

} // namespace

std::vector<std::vector<std::int64_t>> addedPerRound(const std::vector<Range> &plain, const std::vector<Range> &checkpointed,
                                                     const std::vector<std::uint32_t> &layers)
{
    const auto before = layerTimes(plain, layers), after = layerTimes(checkpointed, layers);
    std::vector<std::vector<std::int64_t>> added(layers.size());
    for (std::size_t k = 0; k < layers.size(); ++k) {
        if (before[k].size() != after[k].size())
            continue;
        for (std::size_t round = 0; round < before[k].size(); ++round)
            added[k].push_back(after[k][round] - before[k][round]);
    }
    return added;
}

bool roundsDisagree(const std::vector<std::vector<std::int64_t>> &added)
{
    std::vector<std::int64_t> totals;
    for (const auto &rounds : added) {
        totals.resize(std::max(totals.size(), rounds.size()), 0);
        for (std::size_t round = 0; round < rounds.size(); ++round)
            totals[round] += rounds[round];
    }
    if (totals.size() < 2)
        return false;
    const std::int64_t middle = median(totals);
    return std::any_of(totals.begin(), totals.end(),
                       [&](std::int64_t total) { return 4 * std::abs(total - middle) > std::abs(middle); });
}

std::optional<CalibratedCost> calibratedCost(const std::vector<std::int64_t> &rounds)
{
    if (rounds.empty())
        return std::nullopt;
    const std::int64_t middle = median(rounds);
    std::int64_t farthest = 0;
    for (std::int64_t value : rounds)
        farthest = std::max(farthest, std::abs(value - middle));
    return CalibratedCost{std::max<std::int64_t>(0, middle), farthest};
}

} // namespace peaklens::replay
