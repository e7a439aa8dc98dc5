#pragma once
// The runs being compared: the baseline trace and each rerun with its toggles, the
// predicted and the measured peak and step time, and how far apart they are.

#include "replayprocess.h"

#include <QAbstractTableModel>

#include <vector>

namespace peaklens::gui {

class RunsModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { RunColumn, CheckpointColumn, PredictedPeakColumn, MeasuredPeakColumn, PeakErrorColumn,
                   PredictedStepColumn, MeasuredStepColumn, StepErrorColumn, GradientsColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(std::vector<RunRecord> runs);
    void append(const RunRecord &run);
    const RunRecord &run(int row) const { return m_runs.at(static_cast<std::size_t>(row)); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<RunRecord> m_runs;
};

} // namespace peaklens::gui
