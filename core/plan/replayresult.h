// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a rerun measured, as peaklens-replay's --json object carries it (docs/replay.md):
// the candidate's peak and step times, the baseline's measured beside them, the gradient
// check, where memory ran out and the trace it wrote. peaklens-replay writes it, and the
// app, the CLI and the reports read it, through this one type.

#include "core/trace/phase.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

// Where a run ran out of memory.
struct ReplayOutOfMemory
{
    std::string layer; // empty outside any layer
    Phase phase = Phase::Other;
    std::optional<std::int64_t> step; // unset while the model and optimizer were built
    std::int64_t requestedBytes = 0;
    std::string message; // "out of memory in backward of blocks.7 at step 2"
};

// One configuration's measured steps: the run's, or the baseline's beside them.
struct ReplaySteps
{
    std::vector<std::string> checkpoint;            // the toggled units, as the strategy grammar writes them
    std::optional<std::int64_t> peakAllocatedBytes; // highest over the measured steps; unset when none completed
    std::optional<double> stepTimeMs;               // their median
    std::vector<double> stepTimesMs;                // the measured steps, in order
    std::vector<std::int64_t> stepPeaksBytes;
    std::optional<ReplayOutOfMemory> oom;
    std::string tracePath; // "trace": the file they were recorded to; empty when none
};

// The gradients of one step with the toggles against the same step without (--verify-gradients).
struct ReplayGradientCheck
{
    double maxAbsDifference = 0;
    double maxRelativeDifference = 0; // infinite against an all-zero gradient
    std::string worstParameter;       // "blocks.3[2]": a stage and the index of its parameter
    std::int64_t values = 0;
    double tolerance = 0; // relative: 1e-5 in fp32, 1e-2 in bf16
    bool agree = true;
};

struct ReplayResult : ReplaySteps
{
    std::string device;                  // "cpu", "cuda:0"
    std::string deviceName;              // the CPU or GPU name
    std::string dtype;                   // "fp32", "bf16"
    std::optional<ReplaySteps> baseline; // measured beside the run (--baseline)
    std::string modelJson;               // the spec that ran, as JSON text; empty when unknown
    std::optional<ReplayGradientCheck> gradients;

    // The message of the run's out-of-memory failure; empty when it fit.
    std::string outOfMemory() const { return oom ? oom->message : std::string(); }
    // The baseline's figures; nothing without one.
    std::optional<std::int64_t> baselinePeakAllocatedBytes() const
    {
        return baseline ? baseline->peakAllocatedBytes : std::nullopt;
    }
    std::vector<double> baselineStepTimesMs() const { return baseline ? baseline->stepTimesMs : std::vector<double>(); }

    // Throws Error naming `source` when the text is not such an object. Every key but
    // peak_allocated_bytes and step_times_ms may be absent (runs kept by older versions).
    static ReplayResult fromJson(std::string_view text, const std::string &source);
    // The object as peaklens-replay --json prints it and fromJson reads it back: the one
    // writer of those keys (docs/replay.md).
    std::string toJson() const;
};

} // namespace peaklens
