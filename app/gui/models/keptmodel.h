// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The blocks each chain layer kept for backward in the measured step, one row each, with
// what the toggles do with it (keptActivations): the app's side of `plan --activations`.

#include "core/plan/activationlist.h"

#include <QAbstractTableModel>

#include <vector>

namespace peaklens::gui {

class KeptModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { LayerColumn, PolicyColumn, BytesColumn, OperatorColumn, ModuleColumn, SiteColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(std::vector<KeptActivation> rows);
    const std::vector<KeptActivation> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<KeptActivation> m_rows;
};

} // namespace peaklens::gui
