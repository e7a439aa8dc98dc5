// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a trace is rerun with other checkpoint toggles, as the programs to start: the one
// place the app's Rerun and `peaklens-cli rerun` learn it from.
//
// A replayed trace (it holds a replay spec) runs peaklens-replay once with its spec and
// options, measuring the baseline's toggles beside the new ones step by step; its JSON
// result goes to stdout, its progress (JSON lines) to stderr. A recorded trace (it holds
// the command line it was recorded from) relaunches that command twice under
// `peaklens-cli record` in its working directory, with the same backend and allocator:
// first with the baseline's toggles, then with the new ones in PEAKLENS_CHECKPOINT, so
// both are measured on this machine under the same load.

#include "core/plan/checkpointschedule.h"
#include "core/plan/replayresult.h"
#include "core/trace/trace.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace peaklens {

struct RerunLaunch
{
    std::string program; // "peaklens-replay" or "peaklens-cli", found by the caller beside itself
    std::vector<std::string> arguments;
    std::vector<std::pair<std::string, std::string>> environment; // set on top of the caller's
    std::string workingDirectory;                                 // empty: the caller's
    std::string traceFolder;                                      // relaunches: where its traces land
};

struct RerunPlan
{
    bool relaunch = false;
    // Files to write before the first launch: (path, contents).
    std::vector<std::pair<std::string, std::string>> files;
    // The baseline's relaunch first, then the run's (relaunch); the one replay otherwise.
    std::vector<RerunLaunch> launches;
    std::string runTrace; // a replay's trace file (it reports it too)
    std::string rank;     // relaunches: whose trace to compare (empty: the only one)
};

// Why `trace` cannot be rerun, as a sentence; nullopt when it can.
std::optional<std::string> rerunUnavailable(const Trace &trace);

// "none", or the units joined by commas: how toggles are written on a command line.
std::string togglesArgument(const std::vector<std::string> &units);

// The rerun of `trace` with `toggles` (checkpoint units) against `baseline` (the toggles it
// was recorded with), its files in `folder`. `steps`: the replay's measured steps, at least
// this many (a relaunched command runs its own). Assumes rerunUnavailable(trace) is nullopt.
RerunPlan planRerun(const Trace &trace, const std::vector<std::string> &toggles, const std::vector<std::string> &baseline,
                    const std::string &folder, int steps);

// Relative gradient differences a rerun allows: float rounding of a recompute, or what a
// plan that keeps saved activations in bfloat16 (a lossy one) may add.
inline constexpr double kGradientTolerance = 1e-4;
inline constexpr double kBfloat16GradientTolerance = 1e-2;
// The tolerance for a rerun of `schedule`.
double gradientTolerance(const CheckpointSchedule &schedule);

// Of a relaunch's two traces: whether each parameter's first gradient (the helper notes its
// norm and sum beside the trace under PEAKLENS_GRADIENTS=1) is the same in both, within
// `tolerance`; nullopt when either run left none (a script without the helper).
std::optional<ReplayGradientCheck> relaunchedGradients(const std::string &baselineTrace, const std::string &runTrace,
                                                       double tolerance = kGradientTolerance);

// Of a relaunch's out folder: the trace to compare, the one of `rank` when it left one,
// else the first by name; nullopt when it holds none.
std::optional<std::string> relaunchedTrace(const std::string &folder, const std::string &rank);

} // namespace peaklens
