// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One table of a trace diff: what was live at each trace's peak by layer, allocation site
// or category, the change first.

#include "core/analysis/tracediff.h"

#include <QAbstractTableModel>

namespace peaklens::gui {

class DiffModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { KeyColumn, BytesAColumn, BytesBColumn, DeltaColumn, ChangeColumn, BlocksAColumn, BlocksBColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole };

    using QAbstractTableModel::QAbstractTableModel;

    // `keyTitle`: "Layer", "Allocation site" or "Category".
    void resetData(std::vector<DiffRow> rows, const QString &keyTitle);
    const std::vector<DiffRow> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<DiffRow> m_rows;
    QString m_keyTitle;
};

} // namespace peaklens::gui
