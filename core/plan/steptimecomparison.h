#pragma once
// Step times of a rerun against a baseline's, with their spread: a single median each
// cannot tell a real change from noise. Interleaved runs (peaklens-replay --baseline) are
// compared step by step, so drift of the machine between the two cancels.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct TimingSpread
{
    double medianMs = 0, minMs = 0, maxMs = 0;
    std::size_t samples = 0;
};

// All zero for no samples.
TimingSpread spreadOf(const std::vector<double> &timesMs);

struct StepTimeComparison
{
    TimingSpread baseline, run;
    double changePercent = 0; // the run against the baseline, median of the paired changes (or of the medians when unpaired)
    double lowPercent = 0, highPercent = 0; // the range of the paired changes (unpaired: the run's range against the baseline's median)
    bool paired = false;                    // interleaved step by step
    // The spread is larger than the effect: the measured change is not distinguishable from noise.
    bool withinNoise() const { return lowPercent <= 0 && highPercent >= 0; }
};

// "+38.0 % (+34.1…+45.2 %)", or "within noise (−3.1…+2.4 %)" when the spread covers no change.
std::string changeText(const StepTimeComparison &change);

// A predicted step time carried onto the machine a rerun ran on: the baseline measured
// beside the rerun there, scaled by the change the model predicts (`predictedMs` over the
// model's own step, `modelMs`). `predictedMs` itself without such a baseline.
double predictedStepHereMs(double predictedMs, double modelMs, const std::vector<double> &baselineHereMs);

// Paired when both have the same number of steps (interleaved runs); needs at least one step
// each, and baseline steps that took time: a pair whose baseline step is 0 is left out.
std::optional<StepTimeComparison> compareStepTimes(const std::vector<double> &baselineMs, const std::vector<double> &runMs);

} // namespace peaklens
