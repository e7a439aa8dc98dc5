// SPDX-License-Identifier: Apache-2.0
#include "activationlist.h"

#include "checkpointstrategy.h"

#include "core/analysis/allocationsites.h"
#include "core/trace/units.h"

#include <algorithm>

namespace peaklens {

namespace {

// Per chain layer, the top-level unit holding it whole (null: none) and the units that
// are parts of it: one pass over the schedule, whatever the chain's length.
struct UnitsOfLayers
{
    std::vector<const CheckpointUnit *> whole;
    std::vector<std::vector<const CheckpointUnit *>> parts;

    UnitsOfLayers(const CheckpointSchedule &schedule, std::size_t layers)
        : whole(layers, nullptr)
        , parts(layers)
    {
        for (const CheckpointUnit &unit : schedule) {
            if (unit.isPart()) {
                parts[unit.first].push_back(&unit);
                continue;
            }
            for (std::size_t k = unit.first; k <= unit.last; ++k)
                whole[k] = &unit;
        }
    }
};

std::string labelOf(const CostModel &model, const CheckpointUnit &unit)
{
    if (unit.isPart())
        return model.layers[unit.first].parts[unit.part].path;
    if (unit.first == unit.last)
        return model.layers[unit.first].path;
    return model.layers[unit.first].path + ".." + model.layers[unit.last].path;
}

} // namespace

std::string_view keptPolicyName(KeptPolicy policy)
{
    switch (policy) {
    case KeptPolicy::Save:
        return "SAVE";
    case KeptPolicy::Recompute:
        return "RECOMPUTE";
    case KeptPolicy::Compress:
        return "COMPRESS";
    case KeptPolicy::Offload:
        return "OFFLOAD";
    }
    return "SAVE";
}

std::string policyText(const KeptActivation &row)
{
    std::string text(keptPolicyName(row.policy));
    if (row.policy == KeptPolicy::Recompute)
        return text + " (" + row.unit + ")";
    if (row.policy == KeptPolicy::Compress)
        return text + " (bf16)";
    if (row.policy == KeptPolicy::Offload)
        return text + " (host)";
    if (!row.unit.empty())
        return text + " (" + row.unit + "'s policy)";
    return row.output ? text + ", output" : text;
}

KeptTotals keptTotals(const std::vector<KeptActivation> &list)
{
    KeptTotals totals;
    for (const KeptActivation &row : list) {
        totals.bytes += row.bytes;
        totals.recomputedBytes += row.policy == KeptPolicy::Recompute ? row.bytes : 0;
        totals.compressedBytes += row.policy == KeptPolicy::Compress ? row.bytes : 0;
        totals.offloadedBytes += row.policy == KeptPolicy::Offload ? row.bytes : 0;
    }
    return totals;
}

std::string keptTotalsText(const KeptTotals &totals)
{
    std::vector<std::string> parts{"recomputes " + formatBytes(totals.recomputedBytes) + " of it"};
    if (totals.compressedBytes > 0)
        parts.push_back("packs " + formatBytes(totals.compressedBytes) + " to bfloat16");
    if (totals.offloadedBytes > 0)
        parts.push_back("offloads " + formatBytes(totals.offloadedBytes));
    std::string text = "the plan " + parts.front();
    for (std::size_t i = 1; i < parts.size(); ++i)
        text += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return text;
}

std::vector<KeptActivation> keptActivations(const Trace &trace, const CostModel &model, const CheckpointSchedule &schedule)
{
    return keptActivations(trace, model, schedule, AllocationSites(trace.stacks));
}

std::vector<KeptActivation> keptActivations(const Trace &trace, const CostModel &model, const CheckpointSchedule &schedule,
                                            const AllocationSites &sites)
{
    const MemoryEvents &events = trace.events;
    const UnitsOfLayers units(schedule, model.layers.size());
    std::vector<KeptActivation> list;
    for (std::size_t k = 0; k < model.layers.size(); ++k) {
        const ChainLayer &layer = model.layers[k];
        const CheckpointUnit *whole = units.whole[k];
        const auto rowOf = [&](std::size_t event) {
            KeptActivation row;
            row.layer = layer.path;
            row.event = event;
            row.bytes = events.deltaBytes(event);
            const std::uint32_t stack = events.stack(event);
            row.op = allocatingOperator(trace.stacks, stack);
            const std::uint32_t module = events.layer(event);
            row.module = module < trace.layers.size() ? trace.layers[module].path : std::string();
            row.site = sites.label(sites.siteOf(stack));
            row.output = event == layer.kept.outputEvent;
            return row;
        };
        for (const std::size_t event : layer.kept.events) {
            KeptActivation row = rowOf(event);
            if (whole) {
                // A unit keeps only its input: all it made is recomputed, but the output
                // of its last layer, which the layer after it keeps, and the outputs of
                // the operators its policy saves. A layer run plainly keeps it all, in
                // bfloat16 or in host memory.
                if (!(row.output && k == whole->last)) {
                    const bool saved = std::binary_search(whole->saved.begin(), whole->saved.end(), operatorOverload(row.op));
                    row.policy = whole->kept == KeptForm::Bfloat16 ? KeptPolicy::Compress
                                 : whole->kept == KeptForm::Host   ? KeptPolicy::Offload
                                 : saved                           ? KeptPolicy::Save
                                                                   : KeptPolicy::Recompute;
                    row.unit = labelOf(model, *whole);
                }
            } else {
                for (const CheckpointUnit *unit : units.parts[k]) {
                    const KeptBlocks &part = layer.parts[unit->part].kept;
                    if (event != part.outputEvent
                        && std::find(part.events.begin(), part.events.end(), event) != part.events.end()) {
                        row.policy = KeptPolicy::Recompute;
                        row.unit = labelOf(model, *unit);
                    }
                }
            }
            list.push_back(std::move(row));
        }
        // What a policy keeps beyond them: its operators' outputs the measured step freed
        // before the backward.
        if (!whole || whole->saved.empty())
            continue;
        for (const OperatorOutputs &outputs : layer.operators.outputs) {
            if (!std::binary_search(whole->saved.begin(), whole->saved.end(), outputs.op))
                continue;
            for (const std::size_t event : outputs.events) {
                if (std::find(layer.kept.events.begin(), layer.kept.events.end(), event) != layer.kept.events.end())
                    continue;
                KeptActivation row = rowOf(event);
                row.unit = labelOf(model, *whole);
                list.push_back(std::move(row));
            }
        }
    }
    return list;
}

} // namespace peaklens
