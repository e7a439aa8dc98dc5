// SPDX-License-Identifier: Apache-2.0
#pragma once
// Phases, layers and steps for traces recorded without PeakLens's helper, from what the
// allocations' own call stacks prove:
//
//   backward    a frame of the autograd engine (Engine::evaluate_function, ...) or of
//               loss.backward() (torch/_tensor.py backward, _engine_run_backward)
//   optimizer   a frame in torch/optim (an optimizer's step and its wrapper)
//   forward     a module call (torch.nn's _call_impl), or a forward function
//
// Module nesting comes from the module-call frames (where a build leaves them out of its
// stacks, from the forward functions); wrappers between a call and the module it reaches
// (torch's Python, accelerate's hooks, peft, decorators) are passed over. Each call is
// named by the line that made it ("model:253" for model.py line 253, with the calling
// file's name), and calls repeated from one line in one parent call (a loop over blocks)
// are numbered in the order of their first allocation ("model:253[0]", "model:253[1]",
// ...), the repeated blocks' usual shape. A call ends when its callee's line goes back or
// its callee changes; two calls in a row of a one-line forward (Linear after Linear) read
// as one. Names stop at ten levels and keep each part within 48 characters; layerMatchKey
// (layermatch.h) matches them across recordings whose lines moved.
// Each call's span, from its first allocation to its last, is a forward range. Traces
// without steps get one per forward-backward-optimizer cycle.

#include "core/trace/tracebuilder.h"

#include <vector>

namespace peaklens {

struct StackScopesResult
{
    std::size_t phased = 0;  // allocations given a phase
    std::size_t layered = 0; // allocations given a layer
    std::size_t steps = 0;   // steps added
};

// Gives the events of one device (sorted by time) that have no phase the phase their
// stack proves, and forward allocations without a layer the layer their module calls
// make; adds those layers, their forward ranges, and steps with their phase ranges when
// the builder has no steps yet.
StackScopesResult deriveScopesFromStacks(TraceBuilder &builder, std::vector<MemoryEvent> &events);

// For traces whose forward pass names no layers (no module spans, no stacks): in each
// step with a backward, allocations before the backward begins that have no phase are the
// forward pass's; adds the forward's phase ranges. Only events marked `attributable` (the
// trace's own, not memory from before it) are considered. Returns how many it gave that phase.
std::size_t forwardBeforeBackward(TraceBuilder &builder, std::vector<MemoryEvent> &events, const std::vector<bool> &attributable);

} // namespace peaklens
