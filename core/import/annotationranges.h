// SPDX-License-Identifier: Apache-2.0
#pragma once
// Named START/END annotations (record_function names in snapshots) turned into steps and
// ranges, and the attribution of memory events to the innermost range around them.
//
//   ProfilerStep#N, step:N         a training step
//   fwd:PATH, bwd:PATH, opt[:PATH] a layer's forward or backward, the optimizer
//   Optimizer.step#..., Optimizer.zero_grad#...  the optimizer (PyTorch's own names), and
//                                  a stage of that name
//   anything else                  a stage ("nccl:all_reduce", "enumerate(DataLoader)#..."):
//                                  a named span of no layer and no phase

#include "core/trace/tracebuilder.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

// What one annotation name stands for: a step, a layer's phase, the optimizer, or nothing
// PeakLens attributes memory to (phase Other).
struct AnnotationScope
{
    std::optional<std::int64_t> step; // set for ProfilerStep#N and step:N
    Phase phase = Phase::Other;
    std::string path; // the module path, empty for phase-only spans
};
AnnotationScope parseAnnotation(std::string_view name);

struct Annotation
{
    std::string name;
    bool start = true;
    std::int64_t timeNs = 0;
    std::int32_t group = 0; // events are matched to annotations of their group: device or thread
};

// Adds the steps, ranges and stages the annotations describe; returns the ranges of a
// layer or a phase per group (index = group), sorted by begin. Unpaired annotations are
// dropped.
std::vector<std::vector<Range>> addAnnotations(TraceBuilder &builder, std::vector<Annotation> annotations);

// Gives events (sorted by time) without a layer and phase those of the innermost range
// (ranges sorted by begin and nested) that holds them.
void assignScopes(std::vector<MemoryEvent> &events, const std::vector<Range> &ranges);

} // namespace peaklens
