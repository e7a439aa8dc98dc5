#pragma once
// The runs being compared: the baseline trace and each rerun with its toggles, what the
// baseline's model predicted and what was measured, how far the prediction was off
// ("prediction error"), and how the rerun's step time differs from the baseline measured
// again beside it ("change from baseline"), with the spread that says whether it is noise.

#include "runrecord.h"

#include <QAbstractTableModel>

#include <vector>

namespace peaklens::gui {

class RunsModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    // A measured cell carries its prediction error: "121.8 MiB (+0.0 %)".
    enum Columns { RunColumn, CheckpointColumn, PredictedPeakColumn, MeasuredPeakColumn, PredictedStepColumn,
                   MeasuredStepColumn, StepChangeColumn, GradientsColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(std::vector<RunRecord> runs);
    void append(const RunRecord &run);
    const RunRecord &run(int row) const { return m_runs.at(static_cast<std::size_t>(row)); }
    const std::vector<RunRecord> &runs() const { return m_runs; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "+12.3 %", or "within noise (−3.1 … +2.4 %)" when the spread covers no change.
    static QString changeText(const StepTimeComparison &change);

private:
    QVariant display(const RunRecord &run, int column) const;
    QString toolTip(const RunRecord &run, int column) const;

    std::vector<RunRecord> m_runs;
};

} // namespace peaklens::gui
