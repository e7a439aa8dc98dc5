// SPDX-License-Identifier: GPL-3.0-or-later
#include "livesetmodel.h"

#include "core/report/palette.h"
#include "core/trace/units.h"

namespace peaklens::gui {

void LiveSetModel::resetData(const DocumentPtr &document, const LiveSet &live, Grouping grouping)
{
    beginResetModel();
    m_document = document;
    m_live = live;
    m_grouping = grouping;
    endResetModel();
}

const std::vector<LiveGroup> &LiveSetModel::groups() const
{
    switch (m_grouping) {
    case Grouping::Layer:
        return m_live.byLayer;
    case Grouping::Category:
        return m_live.byCategory;
    case Grouping::Site:
        return m_live.bySite;
    }
    return m_live.byLayer;
}

QString LiveSetModel::groupName(const LiveGroup &group) const
{
    const Trace &trace = *m_document->trace;
    switch (m_grouping) {
    case Grouping::Layer:
        return group.key < trace.layers.size() ? QString::fromStdString(trace.layers[group.key].path) : tr("(no layer)");
    case Grouping::Category:
        return QString::fromUtf8(palette::categoryLabel(static_cast<Category>(group.key)));
    case Grouping::Site:
        return QString::fromStdString(m_document->sites->label(group.key));
    }
    return {};
}

QString LiveSetModel::siteToolTip(const LiveGroup &group) const
{
    const AllocationSites &sites = *m_document->sites;
    QString text = QString::fromStdString(sites.location(group.key));
    for (const std::string &caller : sites.callers(group.largestStack, 4))
        text += QStringLiteral("\ncalled from ") + QString::fromStdString(caller);
    return text;
}

int LiveSetModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_document ? 0 : static_cast<int>(groups().size());
}

int LiveSetModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant LiveSetModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LiveGroup &group = groups()[static_cast<std::size_t>(index.row())];
    const double share = m_live.bytes > 0 ? 100.0 * static_cast<double>(group.bytes) / static_cast<double>(m_live.bytes) : 0.0;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return groupName(group);
        case BytesColumn:
            return QString::fromStdString(formatBytes(group.bytes));
        case ShareColumn:
            return QString(QString::number(share, 'f', 1) + QLatin1Char('%'));
        case BlocksColumn:
            return QString::number(group.blocks);
        }
        return {};
    case SortRole:
        switch (index.column()) {
        case NameColumn:
            return groupName(group);
        case BlocksColumn:
            return static_cast<qlonglong>(group.blocks);
        default:
            return static_cast<qlonglong>(group.bytes);
        }
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        return m_grouping == Grouping::Site && index.column() == NameColumn ? siteToolTip(group) : QVariant();
    case StackRole:
        return m_grouping == Grouping::Site && group.key != AllocationSites::kNoSite ? QVariant(group.largestStack) : QVariant();
    }
    return {};
}

QVariant LiveSetModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return m_grouping == Grouping::Layer      ? tr("Layer")
               : m_grouping == Grouping::Category ? tr("Category")
                                                  : tr("Allocation site");
    case BytesColumn:
        return tr("Live");
    case ShareColumn:
        return tr("Share");
    case BlocksColumn:
        return tr("Blocks");
    }
    return {};
}

} // namespace peaklens::gui
