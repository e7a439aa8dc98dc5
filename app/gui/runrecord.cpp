#include "runrecord.h"

namespace peaklens::gui {

std::optional<double> RunRecord::measuredStepMs() const
{
    if (measured.stepTimesMs.empty())
        return std::nullopt;
    return spreadOf(measured.stepTimesMs).medianMs;
}

std::optional<StepTimeComparison> RunRecord::changeFromBaseline() const
{
    if (baseline || measured.baselineStepTimesMs.empty())
        return std::nullopt;
    return compareStepTimes(measured.baselineStepTimesMs, measured.stepTimesMs);
}

double RunRecord::predictedStepMs() const
{
    return predictedStepHereMs(static_cast<double>(predictedStepNs) / 1e6, static_cast<double>(modelStepNs) / 1e6,
                               baseline ? std::vector<double>() : measured.baselineStepTimesMs);
}

} // namespace peaklens::gui
