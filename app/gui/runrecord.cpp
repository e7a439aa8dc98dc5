// SPDX-License-Identifier: GPL-3.0-or-later
#include "runrecord.h"

namespace peaklens::gui {

std::optional<double> RunRecord::measuredStepMs() const
{
    if (measured.stepTimesMs.empty())
        return std::nullopt;
    return spreadOf(measured.stepTimesMs).medianMs;
}

StepChange RunRecord::stepChange() const
{
    return peaklens::stepChange(predictedStepNs, modelStepNs, baseline ? std::vector<double>() : measured.baselineStepTimesMs,
                                measured.stepTimesMs);
}

} // namespace peaklens::gui
