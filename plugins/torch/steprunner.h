// SPDX-License-Identifier: Apache-2.0
#pragma once
// One training step of a replayed model under a checkpoint schedule: its forward over the
// stages and their parts, each micro-batch's backward and the optimizer step, with the
// ranges of every stage and part recorded as they run.

#include "checkpointfunction.h"
#include "replaymodel.h"
#include "replayrunner.h"

#include "core/plan/checkpointschedule.h"
#include "core/trace/range.h"

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <vector>

namespace peaklens {
class TraceBuilder;
}

namespace peaklens::replay {

class RangeRecorder;

// The trace's layer ids of the model's stages, their parts and the loss.
struct LayerIds
{
    std::vector<std::uint32_t> stages;
    std::vector<std::vector<std::uint32_t>> parts; // per stage
    std::uint32_t loss = kNoLayer;
};

// Registers the model's stages, parts, chain container and loss as layers.
LayerIds registerLayers(TraceBuilder &builder, const ReplayModel &model);

// Waits for the device's queued work (nothing to wait for on the CPU).
void synchronize(const torch::Device &device);

class StepRunner
{
public:
    StepRunner(ReplayModel &model, const CheckpointSchedule &schedule, const LayerIds &ids, const RunOptions &options,
               const torch::Device &device);

    // One optimizer step over all micro-batches; appends its ranges.
    void run(std::int64_t step, const std::vector<Batch> &batches, torch::optim::Optimizer &optimizer,
             std::vector<Range> &ranges);

    // Called when a failure ends the step: keeps the ranges measured so far.
    void abandon(std::vector<Range> &ranges);

private:
    torch::Tensor forward(const Batch &batch, RangeRecorder &record);

    // Part `part` of stage `stage`, in its own ranges: its forward, and its backward from
    // its output's gradient arriving to its input's. Checkpointed when the schedule says.
    torch::Tensor runPart(std::size_t stage, std::size_t part, const torch::Tensor &input, RangeRecorder &record);

    ReplayModel &m_model;
    CheckpointSchedule m_wholeUnits; // the schedule's units of whole stages
    StageMarks m_marks, m_partMarks;
    std::vector<std::vector<std::optional<CheckpointUnit>>> m_partUnits; // per stage and part
    const LayerIds &m_ids;
    const RunOptions &m_options;
    torch::Device m_device;
    std::weak_ptr<RangeRecorder> m_current;
};

} // namespace peaklens::replay
