// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Per-layer differences between the baseline trace and a rerun: activation bytes kept for
// the backward pass, and forward plus backward time, side by side with the change.

#include "tracedocument.h"

#include <QAbstractTableModel>

#include <vector>

namespace peaklens::gui {

class RunComparisonModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns {
        LayerColumn,
        BaselineBytesColumn,
        RunBytesColumn,
        BytesChangeColumn,
        BaselineTimeColumn,
        RunTimeColumn,
        NumColumns
    };
    enum Roles { SortRole = Qt::UserRole };

    using QAbstractTableModel::QAbstractTableModel;

    // Rows are the baseline's layers that the run has too; no run clears the table.
    void resetData(const DocumentPtr &baseline, const DocumentPtr &run);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        QString layer;
        std::int64_t baselineBytes = 0, runBytes = 0;
        std::int64_t baselineNs = 0, runNs = 0; // forward + backward per step
    };
    std::vector<Row> m_rows;
};

} // namespace peaklens::gui
