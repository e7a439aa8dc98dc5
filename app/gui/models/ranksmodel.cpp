// SPDX-License-Identifier: GPL-3.0-or-later
#include "ranksmodel.h"

#include "core/trace/units.h"

#include <QColor>
#include <QFileInfo>

namespace peaklens::gui {

namespace {

QString bytes(std::int64_t value)
{
    return QString::fromStdString(formatBytes(value));
}

} // namespace

void RanksModel::resetData(CrossRankTable table)
{
    beginResetModel();
    m_table = std::move(table);
    endResetModel();
}

int RanksModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_table.rows.size());
}

int RanksModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant RanksModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const RankRow &row = m_table.rows[static_cast<std::size_t>(index.row())];
    const PeakFigures &figures = row.overview.figures;
    if (role == RowRole)
        return index.row();
    if (role == Qt::BackgroundRole && row.outlier)
        return QColor(255, 228, 220);
    if (role == Qt::ToolTipRole && row.outlier)
        return QString::fromStdString(row.reason);
    if (role == Qt::TextAlignmentRole)
        return index.column() == LayerColumn || index.column() == OutlierColumn || index.column() == FileColumn
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == SortRole) {
        switch (index.column()) {
        case RankColumn:
            return qint64(row.rank);
        case PeakColumn:
            return qint64(figures.peakBytes);
        case ReservedColumn:
            return qint64(figures.reservedBytes.value_or(-1));
        case StepColumn:
            return qint64(figures.stepTimeNs.value_or(-1));
        case LayerColumn:
            return QString::fromStdString(row.overview.topLayer);
        case OutlierColumn:
            return row.outlier;
        case FileColumn:
            return QString::fromStdString(row.overview.file);
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case RankColumn:
        return qint64(row.rank);
    case PeakColumn:
        return bytes(figures.peakBytes);
    case ReservedColumn:
        return figures.reservedBytes ? bytes(*figures.reservedBytes) : tr("—");
    case StepColumn:
        return figures.stepTimeNs ? QString::fromStdString(formatDuration(*figures.stepTimeNs)) : tr("—");
    case LayerColumn:
        return row.overview.topLayer.empty()
                   ? tr("—")
                   : tr("%1 (%2)").arg(QString::fromStdString(row.overview.topLayer), bytes(row.overview.topLayerBytes));
    case OutlierColumn:
        return row.outlier ? QString::fromStdString(row.reason) : QString();
    case FileColumn:
        return QFileInfo(QString::fromStdString(row.overview.file)).fileName();
    }
    return {};
}

QVariant RanksModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case RankColumn:
        return tr("Rank");
    case PeakColumn:
        return tr("Peak");
    case ReservedColumn:
        return tr("Reserved");
    case StepColumn:
        return tr("Step (median)");
    case LayerColumn:
        return tr("Holds most at the peak");
    case OutlierColumn:
        return tr("Outlier");
    case FileColumn:
        return tr("File");
    }
    return {};
}

} // namespace peaklens::gui
