#pragma once
// Categories for traces whose source sees only addresses and scopes (the CUPTI collector
// marks them with metakey::Categories = "lifetime"): each allocation still Unknown gets one
// from the phase it was made in and how long it lived.
//
//   made in    freed before                               else
//   forward    the next backward range begins             Activation
//   backward   its step ends (no steps: next forward)     Gradient
//   optimizer  its step ends (no steps: next forward)     OptimizerState
//
// What is freed before that point is Temporary. Allocations outside any phase are
// Parameter when made before the first step and kept through it (weights and buffers),
// OptimizerState when made before it and freed during an optimizer range (the state a
// step replaced), else they stay Unknown. The free gets its allocation's category.

#include "trace.h"

namespace peaklens {

void classifyByLifetime(Trace &trace);

} // namespace peaklens
