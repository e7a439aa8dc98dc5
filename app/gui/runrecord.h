// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One row of the Runs table: the baseline trace or a rerun, with its toggles, what the
// baseline's cost model predicted for them and what was measured — the rerun's steps and,
// beside them on the same machine, the baseline's steps again, so a change in step time
// is read against a baseline measured under the same conditions.

#include "tracedocument.h"

#include "core/plan/replayresult.h"
#include "core/plan/steptimecomparison.h"

#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace peaklens::gui {

struct RunRecord
{
    QString label;          // "baseline", "rerun 1"
    bool baseline = false;  // the trace itself, measured when it was recorded
    QStringList checkpoint; // its units, as a strategy names them
    std::int64_t predictedPeakBytes = 0;
    std::int64_t predictedStepNs = 0;
    std::int64_t modelStepNs = 0;             // the baseline's own step in the model: what predictions are relative to
    ReplayResult measured;                    // peak and step times, and the baseline's measured beside them
    QString outcome;                          // empty when measured; else out of memory, cancelled or why it failed
    DocumentPtr document;                     // the run's own trace, once read
    QString folder;                           // where the rerun wrote (runstore.h)
    bool kept = false;                        // the folder is kept beside the baseline, not a temporary one
    std::shared_ptr<QTemporaryDir> directory; // a temporary folder, kept while the row is
    QStringList tracePaths;                   // the run's trace, then the baseline's re-measured one (relaunches)

    std::optional<double> measuredStepMs() const; // median of the measured steps
    // The predicted change of step time (the what-if bar's) and the one measured against
    // the baseline run again beside it, with the spread of both.
    StepChange stepChange() const;
};

} // namespace peaklens::gui
