// SPDX-License-Identifier: Apache-2.0
#pragma once
// Step times of a rerun against a baseline's, with their spread: a single median each
// cannot tell a real change from noise. Interleaved runs (peaklens-replay --baseline) are
// compared step by step, so drift of the machine between the two cancels.

#include <cstddef>
#include <cstdint>
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
    double lowPercent = 0,
           highPercent = 0; // the range of the paired changes (unpaired: the run's range against the baseline's median)
    bool paired = false;    // interleaved step by step
    // The spread is larger than the effect: the measured change is not distinguishable from noise.
    bool withinNoise() const { return lowPercent <= 0 && highPercent >= 0; }
    // Within noise, and the changes spread over more than kNoisyRangePercent: the machine
    // was too busy for this measurement to say anything, even of a large change.
    bool noisy() const { return withinNoise() && highPercent - lowPercent > kNoisyRangePercent; }
    static constexpr double kNoisyRangePercent = 20;
};

// A rerun's step time as the Runs table and the report give it: the change the cost model
// predicted for its toggles (the what-if bar's figure), and the change measured against the
// baseline's toggles run again beside it on the same machine.
struct StepChange
{
    double predictedPercent = 0;                // the model's step with the toggles against without
    std::optional<TimingSpread> baselineHere;   // the baseline's steps measured beside the run
    std::optional<TimingSpread> run;            // the run's own steps
    std::optional<StepTimeComparison> measured; // the run against baselineHere
};
StepChange stepChange(std::int64_t predictedStepNs, std::int64_t modelStepNs, const std::vector<double> &baselineHereMs,
                      const std::vector<double> &runMs);

// "+24.8 %": a signed percentage with a real minus sign, one decimal.
std::string signedPercentText(double percent);

// "+38.0 % (+34.1…+45.2 %)"; "within noise (−3.1…+2.4 %)" when the spread covers no change;
// "too noisy to tell (−23.4…+41.8 %)" when it covers no change and is wide.
std::string changeText(const StepTimeComparison &change);

// Paired when both have the same number of steps (interleaved runs); needs at least one step
// each, and baseline steps that took time: a pair whose baseline step is 0 is left out.
std::optional<StepTimeComparison> compareStepTimes(const std::vector<double> &baselineMs, const std::vector<double> &runMs);

} // namespace peaklens
