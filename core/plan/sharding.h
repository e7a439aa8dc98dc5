// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sharded data parallelism (FSDP, ZeRO): what one rank of N holds, from the trace of an
// unsharded run. The trace is rewritten as one rank would have recorded it and planned
// again, as batchscaling.h does for another batch. docs/planning.md describes the model.

#include "chainselection.h"

#include "core/trace/trace.h"

#include <cstdint>
#include <string>

namespace peaklens {

struct Sharding
{
    int degree = 1; // ranks sharing the model
    // What is divided among them: 1 optimizer state, 2 also gradients, 3 also parameters
    // (FSDP, ZeRO-3), whose units are gathered whole while they run.
    int zeroStage = 3;
    // The collective copies each all-gather's output once more while it runs (gloo does;
    // NCCL gathers in place).
    bool gatherCopies = false;
};

// "one rank of 8 sharding the traced run (ZeRO stage 3: …)": what the rewritten trace's
// metakey::Sharding says.
std::string shardingDescription(const Sharding &sharding);

// Whether a run on `device` gathers through gloo (the CPU) rather than NCCL.
inline bool gathersWithCopy(const Device &device)
{
    return device.type == DeviceType::Cpu;
}

// The trace as one rank holds it:
// - optimizer state (stage 1 on), gradients (2 on) and parameters (3) take 1/degree of
//   their bytes;
// - a gradient stays whole from its making until its unit's backward ends (the root's:
//   the step's backward), where it is reduce-scattered: a whole copy of the unit's
//   gradients is made, then each shrinks to its shard;
// - at stage 3 each chain layer of `selection` is a unit, the model's other parameters
//   the root: the root's parameters are gathered from the step's first forward to the
//   end of its backward, a unit's through its forward and through its backward. Its
//   backward's gathering is issued as the unit after it in the chain begins its own
//   backward (prefetched); a gathered unit is copied out of the collective's buffer
//   into its parameters as it begins to run, the buffer freed then.
// The rank's trace says so (metakey::Sharding). Throws Error with a sentence when the
// trace cannot say what a unit holds (stage 3 without the parameter bytes of each chain
// layer), has no chain, or is a rank's already.
Trace withSharding(const Trace &trace, const ChainSelection &selection, const Sharding &sharding);

} // namespace peaklens
