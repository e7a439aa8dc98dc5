// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The runs being compared: the baseline trace and each rerun with its toggles; the peak
// predicted and measured ("prediction error"); and the step time as a change: the one the
// model predicted (the what-if bar's figure) beside the one measured against the baseline
// run again beside the rerun on the same machine, with the spread that says whether it is
// noise.

#include "runrecord.h"

#include <QAbstractTableModel>

#include <vector>

namespace peaklens::gui {

class RunsModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    // The measured peak carries its prediction error: "121.8 MiB (+0.0 %)".
    enum Columns {
        RunColumn,
        CheckpointColumn,
        PredictedPeakColumn,
        MeasuredPeakColumn,
        BaselineStepColumn,
        MeasuredStepColumn,
        PredictedChangeColumn,
        MeasuredChangeColumn,
        GradientsColumn,
        NumColumns
    };
    enum Roles { SortRole = Qt::UserRole };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(std::vector<RunRecord> runs);
    void append(const RunRecord &run);
    // The run of `row` after it changed (saved elsewhere, say).
    void replace(int row, const RunRecord &run);
    const RunRecord &run(int row) const { return m_runs.at(static_cast<std::size_t>(row)); }
    const std::vector<RunRecord> &runs() const { return m_runs; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "+12.3 % (+10.1…+14.0 %)", "within noise (−3.1…+2.4 %)" or "too noisy to tell (…)".
    static QString changeText(const StepTimeComparison &change);

private:
    QVariant display(const RunRecord &run, int column) const;
    QString toolTip(const RunRecord &run, int column) const;

    std::vector<RunRecord> m_runs;
};

} // namespace peaklens::gui
