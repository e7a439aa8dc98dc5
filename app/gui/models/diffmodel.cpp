// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffmodel.h"

#include "core/trace/units.h"

#include <QColor>

namespace peaklens::gui {

void DiffModel::resetData(std::vector<DiffRow> rows, const QString &keyTitle)
{
    beginResetModel();
    m_rows = std::move(rows);
    m_keyTitle = keyTitle;
    endResetModel();
}

int DiffModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int DiffModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant DiffModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const DiffRow &row = m_rows[static_cast<std::size_t>(index.row())];
    if (role == SortRole) {
        switch (index.column()) {
        case KeyColumn:
            return QString::fromStdString(row.key);
        case BytesAColumn:
            return qint64(row.bytesA);
        case BytesBColumn:
            return qint64(row.bytesB);
        case DeltaColumn:
            return qint64(row.deltaBytes());
        case ChangeColumn:
            return QString::fromUtf8(row.change().data(), qsizetype(row.change().size()));
        case BlocksAColumn:
            return qint64(row.blocksA);
        case BlocksBColumn:
            return qint64(row.blocksB);
        }
    }
    if (role == Qt::ToolTipRole && index.column() == KeyColumn && !row.detail.empty())
        return QString::fromStdString(row.detail);
    if (role == Qt::ForegroundRole && index.column() == DeltaColumn && row.deltaBytes() != 0)
        return row.deltaBytes() > 0 ? QColor(0xb4, 0x23, 0x18) : QColor(0x1a, 0x7f, 0x37);
    if (role == Qt::TextAlignmentRole)
        return index.column() == KeyColumn || index.column() == ChangeColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                                             : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case KeyColumn:
        return QString::fromStdString(row.key);
    case BytesAColumn:
        return QString::fromStdString(formatBytes(row.bytesA));
    case BytesBColumn:
        return QString::fromStdString(formatBytes(row.bytesB));
    case DeltaColumn:
        return QString((row.deltaBytes() > 0 ? QStringLiteral("+") : QString())
                       + QString::fromStdString(formatBytes(row.deltaBytes())));
    case ChangeColumn: // "new in B", "gone from A", "grew", "shrank", "moved"
        return row.change() == "new"    ? tr("new in B")
               : row.change() == "gone" ? tr("gone from A")
                                        : QString::fromUtf8(row.change().data(), qsizetype(row.change().size()));
    case BlocksAColumn:
        return qint64(row.blocksA);
    case BlocksBColumn:
        return qint64(row.blocksB);
    }
    return {};
}

QVariant DiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return m_keyTitle;
    case BytesAColumn:
        return tr("A");
    case BytesBColumn:
        return tr("B");
    case DeltaColumn:
        return tr("Change");
    case ChangeColumn:
        return QString();
    case BlocksAColumn:
        return tr("Blocks A");
    case BlocksBColumn:
        return tr("Blocks B");
    }
    return {};
}

} // namespace peaklens::gui
