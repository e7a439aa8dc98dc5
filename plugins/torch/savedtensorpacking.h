// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a unit run plainly does with each tensor autograd saves for its backward, as the
// Python helper's SavedTensorPacking does (plugins/python/peaklens/_instrument.py):
// - KeptForm::Bfloat16: a floating-point one is packed to bfloat16 and given back in its
//   own dtype when the backward uses it (integer and half-precision ones stay as they are);
// - KeptForm::Host: it is copied to host memory and brought back to its device when the
//   backward uses it: from a GPU into pinned memory, asynchronously; from the CPU into
//   memory outside LibTorch's allocator, as host memory lies outside a GPU's, the copy back
//   a new tensor.
// The model's parameters and buffers (and views of them) stay where they are; a tensor
// saved by several nodes is packed once.
//
// PyTorch's saved-tensor default hooks are Python functions; LibTorch asks its autograd
// engine for the hooks of each tensor saved, and returns none. While a packing lives on a
// thread, the engine the replay installs (at its first packing) gives each tensor saved on
// that thread the packing's hooks.

#include "core/plan/checkpointschedule.h"

#include <torch/torch.h>

#include <memory>
#include <vector>

namespace peaklens::replay {

class SavedTensorPacking
{
public:
    // `kept`: the model's parameters and buffers.
    SavedTensorPacking(KeptForm form, const std::vector<torch::Tensor> &kept);
    ~SavedTensorPacking();
    SavedTensorPacking(const SavedTensorPacking &) = delete;
    SavedTensorPacking &operator=(const SavedTensorPacking &) = delete;

    struct State;

private:
    std::unique_ptr<State> m_state;
    State *m_outer; // the packing this one hides on the thread
};

} // namespace peaklens::replay
