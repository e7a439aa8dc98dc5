#include "layertablemodel.h"

#include "core/trace/units.h"

namespace peaklens::gui {

void LayerTableModel::resetData(const DocumentPtr &document)
{
    beginResetModel();
    m_document = document;
    m_chainIndex.assign(document ? document->trace->layers.size() : 0, -1);
    m_checkpoint.clear();
    m_peakBytes = 0;
    if (document) {
        if (document->costModel) {
            const auto &chain = document->costModel->layers;
            for (std::size_t i = 0; i < chain.size(); ++i)
                m_chainIndex[chain[i].layer] = static_cast<int>(i);
            m_checkpoint.assign(chain.size(), false);
        }
        const auto &peak = document->summary.peak;
        if (peak.primary)
            m_peakBytes = peak.devices[*peak.primary].allocatedBytes;
    }
    endResetModel();
}

void LayerTableModel::setCheckpoint(const std::vector<bool> &checkpoint)
{
    if (checkpoint.size() != m_checkpoint.size() || checkpoint == m_checkpoint)
        return;
    m_checkpoint = checkpoint;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, CheckpointColumn), index(rowCount() - 1, CheckpointColumn), {Qt::CheckStateRole});
    Q_EMIT checkpointChanged();
}

int LayerTableModel::rowOfLayer(std::uint32_t layer) const
{
    return m_document && layer < m_document->trace->layers.size() ? static_cast<int>(layer) : -1;
}

int LayerTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_document ? 0 : static_cast<int>(m_document->trace->layers.size());
}

int LayerTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant LayerTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto row = static_cast<std::size_t>(index.row());
    const Layer &layer = m_document->trace->layers[row];
    const LayerStats &stats = m_document->summary.layers[row];
    const int chain = m_chainIndex[row];
    const auto milliseconds = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
    const double share = m_peakBytes > 0 ? 100.0 * static_cast<double>(stats.activationBytes) / static_cast<double>(m_peakBytes) : 0.0;

    if (role == LayerRole)
        return static_cast<uint>(row);
    if (role == Qt::CheckStateRole && index.column() == CheckpointColumn && chain >= 0)
        return m_checkpoint[static_cast<std::size_t>(chain)] ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= ActivationColumn && index.column() <= BackwardColumn
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant();
    if (role == Qt::ToolTipRole && index.column() == CheckpointColumn)
        return chain >= 0 ? tr("Checkpoint %1: keep only its input during the forward pass and recompute it in "
                               "the backward pass")
                                .arg(QString::fromStdString(layer.path))
                          : tr("Only the layers of the checkpointable chain can be toggled");
    if (role == SortRole) {
        switch (index.column()) {
        case NameColumn: return static_cast<uint>(row); // module order
        case KindColumn: return QString::fromStdString(layer.kind);
        case ActivationColumn:
        case PeakShareColumn: return static_cast<qlonglong>(stats.activationBytes);
        case ForwardColumn: return static_cast<qlonglong>(stats.forwardNs);
        case BackwardColumn: return static_cast<qlonglong>(stats.backwardNs);
        case CheckpointColumn: return chain >= 0 ? int(m_checkpoint[static_cast<std::size_t>(chain)]) : -1;
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case NameColumn: return QString::fromStdString(layer.path);
    case KindColumn: return QString::fromStdString(layer.kind);
    case ActivationColumn: return QString::fromStdString(formatBytes(stats.activationBytes));
    case PeakShareColumn: return QString(QString::number(share, 'f', 1) + QLatin1Char('%'));
    case ForwardColumn: return QString::number(milliseconds(stats.forwardNs), 'f', 2);
    case BackwardColumn: return QString::number(milliseconds(stats.backwardNs), 'f', 2);
    case CheckpointColumn: return {};
    }
    return {};
}

QVariant LayerTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn: return tr("Layer");
    case KindColumn: return tr("Kind");
    case ActivationColumn: return tr("Activations");
    case PeakShareColumn: return tr("% of peak");
    case ForwardColumn: return tr("Forward ms");
    case BackwardColumn: return tr("Backward ms");
    case CheckpointColumn: return tr("Checkpoint");
    }
    return {};
}

Qt::ItemFlags LayerTableModel::flags(const QModelIndex &index) const
{
    Qt::ItemFlags flags = QAbstractTableModel::flags(index);
    if (index.isValid() && index.column() == CheckpointColumn && m_chainIndex[static_cast<std::size_t>(index.row())] >= 0)
        flags |= Qt::ItemIsUserCheckable;
    return flags;
}

bool LayerTableModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || role != Qt::CheckStateRole
        || index.column() != CheckpointColumn)
        return false;
    const int chain = m_chainIndex[static_cast<std::size_t>(index.row())];
    if (chain < 0)
        return false;
    const bool on = value.value<Qt::CheckState>() == Qt::Checked;
    if (m_checkpoint[static_cast<std::size_t>(chain)] == on)
        return true;
    m_checkpoint[static_cast<std::size_t>(chain)] = on;
    Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
    Q_EMIT checkpointChanged();
    return true;
}

} // namespace peaklens::gui
