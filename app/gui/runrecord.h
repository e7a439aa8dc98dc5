// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One row of the Runs table: the baseline trace or a rerun — its toggles, what the
// baseline's cost model predicted for them and what was measured (core's RerunRow) — with
// where its files are and its own trace once read.

#include "tracedocument.h"

#include "core/plan/rerunrow.h"

#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace peaklens::gui {

struct RunRecord
{
    QString label;                            // "baseline", "rerun 1"
    bool baseline = false;                    // the trace itself, measured when it was recorded
    RerunRow row;                             // its toggles, their prediction, what was measured and the outcome
    DocumentPtr document;                     // the run's own trace, once read
    QString folder;                           // where the rerun wrote (runstore.h)
    bool kept = false;                        // the folder is kept beside the baseline, not a temporary one
    std::shared_ptr<QTemporaryDir> directory; // a temporary folder, kept while the row is
    QStringList tracePaths;                   // the run's trace, then the baseline's re-measured one (relaunches)

    QStringList checkpoint() const; // its units, as a strategy names them
    QString outcome() const;        // empty when measured; else out of memory, cancelled or why it failed
    bool cancelled() const { return outcome() == cancelledOutcome(); }
    static QString cancelledOutcome();
    std::optional<double> measuredStepMs() const; // median of the measured steps
    // The predicted change of step time (the what-if bar's) and the one measured against
    // the baseline run again beside it, with the spread of both.
    StepChange stepChange() const;
};

} // namespace peaklens::gui
