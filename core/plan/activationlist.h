// SPDX-License-Identifier: Apache-2.0
#pragma once
// The blocks a plan leaves kept for backward, one by one (`plan --activations`): per chain
// layer, each block its forward left live for its backward in the measured step, with the
// operator that allocated it, the module it was made in, its allocation site, and what
// the plan does with it; and under a per-op policy, the outputs of the operators it saves
// that the measured step had freed before the backward. Run on a rerun's trace, the same list shows what the rerun
// actually kept. Allocator traces know sizes, not dtypes or shapes.

#include "checkpointschedule.h"
#include "core/trace/trace.h"
#include "costmodel.h"
#include "operatoroutputs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace peaklens {

enum class KeptPolicy : std::uint8_t {
    Save,      // kept from the forward until the backward uses it
    Recompute, // freed after the forward, made again by the backward's recompute
    Compress,  // kept in bfloat16 from the forward until the backward unpacks it
    Offload,   // kept in host memory from the forward until the backward brings it back
};

std::string_view keptPolicyName(KeptPolicy policy); // "SAVE", "RECOMPUTE", "COMPRESS", "OFFLOAD"

struct KeptActivation
{
    std::string layer; // the chain layer whose forward made it
    // The plan's unit that recomputes it ("blocks.3", "blocks.0..blocks.3", "blocks.3.attn"),
    // whose per-op policy saves it (policy Save) or that keeps it in bfloat16 or host
    // memory; empty: none.
    std::string unit;
    std::size_t event;   // its allocating event in the trace
    std::int64_t bytes;  // as allocated
    std::string op;      // the operator that allocated it ("aten::addmm"); empty where the trace does not say
    std::string module;  // the layer (module) running when it was allocated; empty: none
    std::string site;    // its allocation site, as the live set names it
    bool output = false; // the layer's output, which the next layer keeps for its own backward
    KeptPolicy policy = KeptPolicy::Save;
};

class AllocationSites;

// `model` built from `trace`; `schedule` a plan over its chain; `sites` of trace.stacks.
std::vector<KeptActivation> keptActivations(const Trace &trace, const CostModel &model, const CheckpointSchedule &schedule,
                                            const AllocationSites &sites);
std::vector<KeptActivation> keptActivations(const Trace &trace, const CostModel &model, const CheckpointSchedule &schedule);

// "RECOMPUTE (blocks.3)", "SAVE (blocks.3's policy)", "COMPRESS (bf16)", "OFFLOAD (host)",
// "SAVE, output", "SAVE": a row's policy as the list shows it.
std::string policyText(const KeptActivation &row);

// What a list keeps in all, and how much of it the plan recomputes, keeps in bfloat16 and
// offloads.
struct KeptTotals
{
    std::int64_t bytes = 0, recomputedBytes = 0, compressedBytes = 0, offloadedBytes = 0;
};
KeptTotals keptTotals(const std::vector<KeptActivation> &list);
// "the plan recomputes 31.02 MiB of it, packs 33.02 MiB to bfloat16 and offloads 33.02 MiB"
// (the last two where there are such blocks).
std::string keptTotalsText(const KeptTotals &totals);

} // namespace peaklens
