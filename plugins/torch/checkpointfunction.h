// SPDX-License-Identifier: Apache-2.0
#pragma once
// Activation checkpointing of a unit of consecutive stages as a LibTorch autograd
// Function: the forward runs the stages without recording a graph and saves only the
// unit's input; the backward recomputes them under grad with the RNG state (CPU and CUDA)
// and autocast state of the forward, checkpointing the unit's inner units again, then
// back-propagates through the recomputed graph.

#include "replaymodel.h"

#include "core/plan/checkpointschedule.h"

#include <functional>

namespace peaklens::replay {

// Where the runner marks a unit's stages: their forwards (not their recomputes), and the
// gradient of a stage's output arriving, where that stage's backward begins.
struct StageMarks
{
    std::function<void(std::size_t stage)> forwardBegins;
    std::function<void()> forwardEnds;
    std::function<void(std::size_t stage)> backwardBegins;
};

// `stages`, `unit` and `marks` must outlive the step's backward.
torch::Tensor runCheckpointed(const std::vector<Stage> &stages, const CheckpointUnit &unit, const torch::Tensor &input,
                              const StageMarks &marks);

} // namespace peaklens::replay
