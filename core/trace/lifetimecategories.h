// SPDX-License-Identifier: Apache-2.0
#pragma once
// Categories for traces whose source sees only addresses and scopes (the CUPTI collector
// marks them with metakey::Categories = "lifetime"): each allocation still Unknown gets one
// from the phase it was made in and how long it lived.
//
//   made in    freed before                                          else
//   forward    the next backward range begins                        Activation
//   backward   its step's optimizer begins (no optimizer range:      Gradient
//              its step's last backward range ends; no steps: the
//              next forward begins)
//   optimizer  its step ends (no steps: next forward)                OptimizerState
//
// What is freed before that point is Temporary. What is made in a step's forward and kept
// past the step's end (a library's workspace made at its first call, a cache) is no
// activation and stays Unknown. A gradient is what reaches the optimizer,
// which `zero_grad(set_to_none=True)` may free later in the same step; autograd's own
// buffers die inside the backward. Allocations outside any phase are
// Parameter when made before the first step and kept through it (weights and buffers),
// OptimizerState when made before it and freed during an optimizer range (the state a
// step replaced), else they stay Unknown. The free gets its allocation's category.

#include "trace.h"

#include <functional>
#include <memory>

namespace peaklens {

void classifyByLifetime(Trace &trace);

// The same fed the trace's events in time order a chunk at a time, for a trace too big to
// hold: `trace` gives the lanes, ranges and steps. A decision names the event by its
// index in the trace; the allocation and the free of a block are decided when the free
// comes, blocks never freed by finish().
class LifetimeClassifier
{
public:
    using Decide = std::function<void(std::size_t index, Category category)>;

    explicit LifetimeClassifier(const Trace &trace);
    ~LifetimeClassifier();
    LifetimeClassifier(const LifetimeClassifier &) = delete;
    LifetimeClassifier &operator=(const LifetimeClassifier &) = delete;

    // `events` are the trace's from index `first` on.
    void add(const MemoryEvents &events, std::size_t first, const Decide &decide);
    void finish(const Decide &decide);

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace peaklens
