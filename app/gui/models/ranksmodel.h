// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The ranks (or processes) of one run side by side: peak, reserved peak, median step time
// and the layer that holds the most at the peak, the outlier rank flagged with why.

#include "core/analysis/crossrank.h"

#include <QAbstractTableModel>

namespace peaklens::gui {

class RanksModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { RankColumn, PeakColumn, ReservedColumn, StepColumn, LayerColumn, OutlierColumn, FileColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole, RowRole };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(CrossRankTable table);
    const CrossRankTable &table() const { return m_table; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    CrossRankTable m_table;
};

} // namespace peaklens::gui
