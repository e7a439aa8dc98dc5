// SPDX-License-Identifier: GPL-3.0-or-later
#include "keptmodel.h"

#include "core/trace/units.h"

namespace peaklens::gui {

namespace {

QString orDash(const std::string &text)
{
    return text.empty() ? QStringLiteral("-") : QString::fromStdString(text);
}

} // namespace

void KeptModel::resetData(std::vector<KeptActivation> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int KeptModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int KeptModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant KeptModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const KeptActivation &row = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case LayerColumn:
            return QString::fromStdString(row.layer);
        case PolicyColumn:
            return QString::fromStdString(policyText(row));
        case BytesColumn:
            return QString::fromStdString(formatBytes(row.bytes));
        case OperatorColumn:
            return orDash(row.op);
        case ModuleColumn:
            return orDash(row.module);
        case SiteColumn:
            return QString::fromStdString(row.site);
        }
        return {};
    case SortRole:
        // The layer column sorts in the chain's order, each layer's blocks as allocated.
        if (index.column() == LayerColumn)
            return index.row();
        if (index.column() == BytesColumn)
            return static_cast<qlonglong>(row.bytes);
        return data(index, Qt::DisplayRole);
    case Qt::TextAlignmentRole:
        return index.column() == BytesColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    }
    return {};
}

QVariant KeptModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case LayerColumn:
        return tr("Layer");
    case PolicyColumn:
        return tr("With the toggles");
    case BytesColumn:
        return tr("Bytes");
    case OperatorColumn:
        return tr("Operator");
    case ModuleColumn:
        return tr("Made in");
    case SiteColumn:
        return tr("Allocated at");
    }
    return {};
}

} // namespace peaklens::gui
