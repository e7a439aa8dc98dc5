// SPDX-License-Identifier: GPL-3.0-or-later
#include "runrecord.h"

#include <QObject>

namespace peaklens::gui {

QStringList RunRecord::checkpoint() const
{
    QStringList units;
    for (const std::string &unit : row.strategy.unitTexts())
        units << QString::fromStdString(unit);
    return units;
}

QString RunRecord::outcome() const
{
    return QString::fromStdString(row.outcome);
}

QString RunRecord::cancelledOutcome()
{
    return QObject::tr("cancelled");
}

std::optional<double> RunRecord::measuredStepMs() const
{
    if (row.measured.stepTimesMs.empty())
        return std::nullopt;
    return spreadOf(row.measured.stepTimesMs).medianMs;
}

StepChange RunRecord::stepChange() const
{
    // The baseline row is the trace itself: no baseline was measured beside it.
    if (baseline)
        return peaklens::stepChange(row.predicted.stepTimeNs, row.modelBaseline.stepTimeNs, {}, row.measured.stepTimesMs);
    return row.stepChange();
}

} // namespace peaklens::gui
