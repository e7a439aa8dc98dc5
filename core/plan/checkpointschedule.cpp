// SPDX-License-Identifier: Apache-2.0
#include "checkpointschedule.h"

#include <algorithm>

namespace peaklens {

namespace {

void countUnits(const std::vector<CheckpointUnit> &units, std::vector<std::size_t> &counts)
{
    for (const CheckpointUnit &unit : units) {
        if (unit.isPart() || unit.runsPlainly())
            continue;
        for (std::size_t k = unit.first; k <= unit.last && k < counts.size(); ++k)
            ++counts[k];
        countUnits(unit.inner, counts);
    }
}

} // namespace

std::string_view keptFormName(KeptForm form)
{
    switch (form) {
    case KeptForm::AsMade:
        return "";
    case KeptForm::Bfloat16:
        return "bf16";
    case KeptForm::Host:
        return "offload";
    }
    return "";
}

std::optional<KeptForm> keptFormNamed(std::string_view name)
{
    for (const KeptForm form : {KeptForm::Bfloat16, KeptForm::Host}) {
        if (name == keptFormName(form))
            return form;
    }
    return std::nullopt;
}

CheckpointSchedule singleLayerUnits(const std::vector<bool> &toggles)
{
    CheckpointSchedule schedule;
    for (std::size_t k = 0; k < toggles.size(); ++k) {
        if (toggles[k])
            schedule.push_back({k, k, {}});
    }
    return schedule;
}

std::vector<bool> toggledPositions(const CheckpointSchedule &schedule, std::size_t count)
{
    std::vector<bool> toggles(count, false);
    for (const CheckpointUnit &unit : schedule) {
        for (std::size_t k = unit.first; k <= unit.last && k < count && !unit.isPart() && !unit.runsPlainly(); ++k)
            toggles[k] = true;
    }
    return toggles;
}

std::vector<std::size_t> recomputeCounts(const CheckpointSchedule &schedule, std::size_t count)
{
    std::vector<std::size_t> counts(count, 0);
    countUnits(schedule, counts);
    return counts;
}

bool isPerLayer(const CheckpointSchedule &schedule)
{
    return std::all_of(schedule.begin(), schedule.end(), [](const CheckpointUnit &unit) {
        return unit.first == unit.last && unit.inner.empty() && !unit.isPart() && unit.saved.empty() && !unit.runsPlainly();
    });
}

std::vector<std::uint64_t> partMasks(const CheckpointSchedule &schedule, std::size_t count)
{
    std::vector<std::uint64_t> masks(count, 0);
    for (const CheckpointUnit &unit : schedule) {
        if (unit.isPart() && unit.first < count && unit.part < 64)
            masks[unit.first] |= std::uint64_t(1) << unit.part;
    }
    return masks;
}

} // namespace peaklens
