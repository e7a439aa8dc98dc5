#pragma once
// Activation checkpointing of one stage as a LibTorch autograd Function: the forward runs
// without recording a graph and saves only the stage's input; the backward recomputes
// the stage under grad with the RNG state (CPU and CUDA) and autocast state of the
// forward, then back-propagates through the recomputed graph.

#include "replaymodel.h"

namespace peaklens::replay {

torch::Tensor runCheckpointed(const Stage &stage, const torch::Tensor &input);

} // namespace peaklens::replay
