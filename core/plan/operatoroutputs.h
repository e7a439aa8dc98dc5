// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which operator made each block, and what a layer's forward leaves per operator: the
// outputs a per-op checkpoint policy (PyTorch's selective activation checkpointing) keeps
// when it saves that operator, every output the operator's calls returned, those the
// measured step freed before the backward included; and the time its calls took, which
// such a policy no longer spends recomputing.

#include "core/trace/stacktable.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace peaklens {

struct LaneDevices;
struct Trace;

// The operator a stack's allocation came from: its innermost operator frame, passing over
// a factory (aten::empty and its kin) that allocated for an operator calling it.
std::string allocatingOperator(const StackTable &stacks, std::uint32_t stack);

struct OperatorOutputs
{
    std::string op;                  // its overload name, "aten.addmm.default"
    std::int64_t bytes = 0;          // what its calls' outputs hold in all
    std::vector<std::size_t> events; // their allocating events, in order
    std::int64_t ns = 0;             // its calls' time
    std::uint32_t calls = 0;         // its calls that allocated
    bool operator==(const OperatorOutputs &) const = default;
};

// What a selective checkpoint adds per operator call that allocates in its forward:
// PyTorch's policy runs as a Python dispatch mode over every operator of the forward and
// of the recompute. Measured on the CPU of a 2-core development machine: 2.4 ms more than a
// plain checkpoint for a GPT block whose forward makes 50 operator calls, 20 of them
// allocating (docs/planning.md).
inline constexpr std::int64_t kSelectiveCallNs = 120'000;
// The same for peaklens-replay's policy, a C++ dispatch fallback: none the measurement
// resolves (four such blocks, 20 interleaved steps: a median of -0.4 ms a step, quartiles
// -2.5 and +2.2 ms).
inline constexpr std::int64_t kReplaySelectiveCallNs = 0;

// One layer's forward in one pass, per operator, sorted by operator; spanNs its length.
struct OperatorProfile
{
    std::vector<OperatorOutputs> outputs;
    std::int64_t spanNs = 0;
    std::uint32_t calls = 0; // operator calls that allocated, all operators
    // What a policy's dispatch adds per such call: the trace's writer's (the replay's or PyTorch's).
    std::int64_t selectiveCallNs = kSelectiveCallNs;
    bool operator==(const OperatorProfile &) const = default;
};

// The forward whose events on `device` are [begin, end) and which ran from beginNs to
// endNs; the block allocated by event `output` (the layer's own output, which the next
// layer keeps whatever the policy) is left out. A block counts as an output when it
// outlives the span or lives while an operator other than its own allocates: a block its
// operator frees before another allocates is that operator's scratch space, which no
// policy keeps. An operator's time runs from its first allocation to the next allocation
// by another (the span's end for the last): an operator allocates its outputs as it
// begins, and one that allocates nothing (a view, an in-place update) counts with the one
// before it. On a GPU the allocations mark launches, not kernels, so these times are the
// host's. Blocks without an operator frame, or of an operator no policy keeps
// (keptByPolicies), belong to no operator.
OperatorProfile operatorProfile(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::size_t begin,
                                std::size_t end, std::int64_t beginNs, std::int64_t endNs, std::size_t output);

// The per-op policies worth weighing for a forward: its operators ranked by the time their
// calls took per byte their outputs keep (those keeping nothing first), and each leading run
// of the first `most` of them (sorted, as a unit's saved operators are), shortest first.
std::vector<std::vector<std::string>> leadingPolicies(const OperatorProfile &profile, std::size_t most = 8);

// What saving `ops` (overload names, sorted) keeps of a profile, and the time of their calls.
std::int64_t savedBytes(const OperatorProfile &profile, const std::vector<std::string> &ops);
std::int64_t savedNs(const OperatorProfile &profile, const std::vector<std::string> &ops);

} // namespace peaklens
