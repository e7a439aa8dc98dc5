// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a model's training steps with per-stage checkpoint toggles and measures them:
// warm-up steps, then measured steps; peak allocated bytes and wall time per step, the
// median step time, and a trace of every allocation attributed to layer and phase.
// An out-of-memory failure is a result, not an error.

#include "modelspec.h"
#include "replaymodel.h"

#include "core/plan/checkpointschedule.h"
#include "core/plan/replayresult.h"
#include "core/trace/trace.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace peaklens::replay {

enum class DeviceChoice { Auto, Cpu, Cuda };

struct RunOptions
{
    std::string checkpoint = "none"; // a checkpoint strategy (core/plan/checkpointstrategy.h)
    int steps = 5;
    int warmupSteps = 2;
    DeviceChoice device = DeviceChoice::Auto;
    bool bf16 = false;    // bf16 autocast in the forward
    int microBatches = 1; // gradient accumulation: forward+backward per optimizer step
    // CPU only: allocations beyond this fail as out of memory. Unset: 90 % of the memory
    // available when the run starts, so a too-large model ends in a result, not in swap.
    std::optional<std::int64_t> memoryLimitBytes;
    std::function<void(const nlohmann::json &)> progress; // JSON lines: start, step, done
    bool keepGradients = false;                           // RunResult::gradients: each parameter's gradient of the last step run
    // A second checkpoint strategy whose steps run beside the measured ones, one each way
    // round by turns (baseline first in even steps), warm-up included, on the same model,
    // batches and optimizer: a comparison of step times measured on one machine at one time.
    // They are measured but left out of the trace and of the result's own figures.
    std::optional<std::string> baseline;
    // After the measured steps, this many steps with every chain stage checkpointed, not
    // in the trace: per stage, what checkpointing it adds to a step, in the trace's
    // "checkpoint.costs" metadata for the planner. 0: none.
    int calibrationSteps = 0;
    // A new file the trace streams to as the run goes, each measured step committed when
    // it ends, so that it can be followed while written; finished when the run ends. Empty: none.
    std::string out;
};

struct StepMeasure
{
    std::int64_t number = 0;
    bool warmup = false;
    std::int64_t peakAllocatedBytes = 0;
    double timeMs = 0;
};

// The steps of RunOptions::baseline, measured beside the run's.
struct BaselineResult
{
    std::vector<std::string> checkpoint;
    CheckpointSchedule schedule; // the units checkpoint lists
    std::vector<StepMeasure> steps;                 // warm-up ones too
    std::optional<std::int64_t> peakAllocatedBytes; // highest over measured steps
    std::optional<double> stepTimeMs;               // median over measured steps
    std::optional<ReplayOutOfMemory> oom;           // no more baseline steps ran after it
};

struct RunResult
{
    ModelSpec spec;
    std::string device; // "cpu", "cuda:0"
    std::string deviceName;
    std::string dtype; // "fp32", "bf16"
    std::vector<std::string> checkpoint;
    CheckpointSchedule schedule; // the units checkpoint lists
    std::vector<StepMeasure> steps;
    std::optional<std::int64_t> peakAllocatedBytes; // highest over measured steps
    std::optional<double> stepTimeMs;               // median over measured steps
    std::optional<ReplayOutOfMemory> oom;
    std::optional<BaselineResult> baseline; // with RunOptions::baseline
    TracePtr trace;
    std::vector<torch::Tensor> gradients;   // with keepGradients
    std::vector<std::string> gradientNames; // "blocks.3[2]": the stage and the parameter's index in it
};

// The units a --checkpoint argument checkpoints, over the stages in order (and the stages'
// parts). Throws Error naming `option` and what is unknown, with the stage names to choose from.
CheckpointSchedule resolveCheckpoint(const std::vector<Stage> &stages, const std::string &argument,
                                     const std::string &option = "--checkpoint");

// Throws Error for a device that is not there or a model that cannot be built or run.
RunResult runReplay(const ModelSpec &spec, const RunOptions &options);

// Gradients of one training step with the toggles against the same step without any,
// from the same parameters, batch and random numbers.
struct GradientCheck
{
    double maxAbsDifference = 0;      // largest |checkpointed - plain| over all gradient values
    double maxRelativeDifference = 0; // per parameter that difference over its largest |plain| value; the largest
    std::string worstParameter;       // where the relative difference is largest
    std::int64_t values = 0;
    double tolerance = 0; // relative: 1e-5 in fp32, 1e-2 in bf16
    bool agree() const { return maxRelativeDifference <= tolerance; }
};

// Runs the step twice (plain, then with options.checkpoint) with options' device, dtype,
// micro-batches and memory limit. Throws Error when either run fails or runs out of memory.
GradientCheck verifyGradients(const ModelSpec &spec, const RunOptions &options);

// What a run measured, as peaklens-replay --json prints it and its trace's replay.result
// keeps it, with the gradient check and the trace's path where there are any.
ReplayResult replayResultOf(const RunResult &run, const std::optional<GradientCheck> &check = std::nullopt,
                            const std::string &tracePath = {});

} // namespace peaklens::replay
