// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a rerun measured, read from peaklens-replay's --json object (docs/replay.md): the
// candidate's peak and step times, the baseline's measured beside them, the gradient check,
// an out-of-memory message and the trace it wrote. The app, the CLI and the reports read
// reruns through this one type.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

struct ReplayGradientCheck
{
    double maxRelativeDifference = 0;
    bool agree = true;
};

struct ReplayResult
{
    std::optional<std::int64_t> peakAllocatedBytes;
    std::vector<double> stepTimesMs; // the measured steps, in order
    std::optional<std::int64_t> baselinePeakAllocatedBytes;
    std::vector<double> baselineStepTimesMs; // measured beside them (--baseline), in order; empty without
    std::optional<ReplayGradientCheck> gradients;
    std::string outOfMemory; // the message, empty when it fit
    std::string tracePath;   // "trace", empty when none
    // Throws Error naming `source` when the text is not such an object.
    static ReplayResult fromJson(std::string_view text, const std::string &source);
    // The same object again, as fromJson reads it: how a kept rerun is saved.
    std::string toJson() const;
};

} // namespace peaklens
