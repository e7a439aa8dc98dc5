// SPDX-License-Identifier: GPL-3.0-or-later
#include "runcomparisonmodel.h"

#include "core/trace/units.h"

namespace peaklens::gui {

void RunComparisonModel::resetData(const DocumentPtr &baseline, const DocumentPtr &run)
{
    beginResetModel();
    m_rows.clear();
    if (baseline && run) {
        const Trace &base = *baseline->trace;
        for (std::uint32_t layer = 0; layer < base.layers.size(); ++layer) {
            const auto other = run->trace->findLayer(base.layers[layer].path);
            if (!other)
                continue;
            const LayerStats &a = baseline->summary.layers[layer];
            const LayerStats &b = run->summary.layers[*other];
            m_rows.push_back({QString::fromStdString(base.layers[layer].path), a.activationBytes, b.activationBytes,
                              a.forwardNs + a.backwardNs, b.forwardNs + b.backwardNs});
        }
    }
    endResetModel();
}

int RunComparisonModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunComparisonModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant RunComparisonModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[static_cast<std::size_t>(index.row())];
    const auto bytes = [](std::int64_t value) { return QString::fromStdString(formatBytes(value)); };
    // A container never called itself has no time of its own.
    const auto milliseconds = [](std::int64_t ns) {
        return ns > 0 ? QString::number(static_cast<double>(ns) / 1e6, 'f', 2) : QStringLiteral("—");
    };
    const std::int64_t change = row.runBytes - row.baselineBytes;
    if (role == Qt::TextAlignmentRole)
        return index.column() == LayerColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == SortRole) {
        switch (index.column()) {
        case LayerColumn:
            return index.row();
        case BaselineBytesColumn:
            return static_cast<qlonglong>(row.baselineBytes);
        case RunBytesColumn:
            return static_cast<qlonglong>(row.runBytes);
        case BytesChangeColumn:
            return static_cast<qlonglong>(change);
        case BaselineTimeColumn:
            return static_cast<qlonglong>(row.baselineNs);
        case RunTimeColumn:
            return static_cast<qlonglong>(row.runNs);
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case LayerColumn:
        return row.layer;
    case BaselineBytesColumn:
        return bytes(row.baselineBytes);
    case RunBytesColumn:
        return bytes(row.runBytes);
    case BytesChangeColumn:
        return change == 0 ? QString() : (change > 0 ? QStringLiteral("+") : QStringLiteral("−")) + bytes(std::abs(change));
    case BaselineTimeColumn:
        return milliseconds(row.baselineNs);
    case RunTimeColumn:
        return milliseconds(row.runNs);
    }
    return {};
}

QVariant RunComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case LayerColumn:
        return tr("Layer");
    case BaselineBytesColumn:
        return tr("Baseline activations");
    case RunBytesColumn:
        return tr("Run activations");
    case BytesChangeColumn:
        return tr("Change");
    case BaselineTimeColumn:
        return tr("Baseline ms");
    case RunTimeColumn:
        return tr("Run ms");
    }
    return {};
}

} // namespace peaklens::gui
