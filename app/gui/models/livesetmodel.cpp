// SPDX-License-Identifier: GPL-3.0-or-later
#include "livesetmodel.h"

#include "core/error.h"
#include "core/report/palette.h"
#include "core/trace/units.h"

#include <array>

namespace peaklens::gui {

void LiveSetModel::resetData(const DocumentPtr &document, const LiveSet &live, Grouping grouping, const QString &pattern)
{
    std::vector<Row> rows;
    QString problem;
    try {
        if (document)
            rows = rowsOf(document, live, grouping, pattern);
    } catch (const Error &error) {
        problem = QString::fromStdString(error.what());
    }
    beginResetModel();
    m_live = live;
    m_grouping = grouping;
    m_rows = std::move(rows);
    m_problem = problem;
    endResetModel();
}

std::vector<LiveSetModel::Row> LiveSetModel::rowsOf(const DocumentPtr &document, const LiveSet &live, Grouping grouping,
                                                    const QString &pattern) const
{
    const Trace &trace = *document->trace;
    const AllocationSites &sites = *document->sites;
    std::vector<Row> rows;
    const auto fromGroups = [&](const std::vector<LiveGroup> &groups, auto name) {
        for (const LiveGroup &group : groups)
            rows.push_back(Row{name(group.key), group.bytes, group.blocks, std::nullopt, {}});
    };
    switch (grouping) {
    case Grouping::Layer:
        fromGroups(live.byLayer, [&](std::uint32_t key) {
            return key < trace.layers.size() ? QString::fromStdString(trace.layers[key].path) : tr("(no layer)");
        });
        break;
    case Grouping::Category:
        fromGroups(live.byCategory,
                   [](std::uint32_t key) { return QString::fromUtf8(palette::categoryLabel(static_cast<Category>(key))); });
        break;
    case Grouping::Site:
        for (const LiveGroup &group : live.bySite) {
            QString toolTip = QString::fromStdString(sites.location(group.key));
            for (const std::string &caller : sites.callers(group.largestStack, 4))
                toolTip += QStringLiteral("\ncalled from ") + QString::fromStdString(caller);
            rows.push_back(Row{QString::fromStdString(sites.label(group.key)), group.bytes, group.blocks,
                               group.key != AllocationSites::kNoSite ? std::optional(group.largestStack) : std::nullopt,
                               toolTip});
        }
        break;
    default: {
        const BlockGrouping by{*blockKind(grouping), grouping == Grouping::Pattern ? pattern.toStdString() : std::string()};
        if (by.kind == BlockGrouping::Kind::Regex)
            (void)parseBlockGrouping(by.text()); // a bad pattern throws, for resetData to say why
        for (const GroupRow &group : groupBlocks(trace, sites, live, by))
            rows.push_back(Row{QString::fromStdString(group.key), group.bytes, group.blocks, std::nullopt, {}});
        break;
    }
    }
    return rows;
}

std::optional<BlockGrouping::Kind> LiveSetModel::blockKind(Grouping grouping)
{
    using Kind = BlockGrouping::Kind;
    static constexpr std::array<Kind, 7> kinds = {Kind::File,         Kind::Regex, Kind::Stage, Kind::CompileContext,
                                                  Kind::UserMetadata, Kind::Pool,  Kind::Stream};
    const int index = int(grouping) - int(Grouping::File);
    return index >= 0 && index < int(kinds.size()) ? std::optional(kinds[std::size_t(index)]) : std::nullopt;
}

LiveSetModel::Grouping LiveSetModel::groupingOf(BlockGrouping::Kind kind)
{
    for (int g = int(Grouping::File); g <= int(Grouping::Stream); ++g) {
        if (blockKind(Grouping(g)) == kind)
            return Grouping(g);
    }
    return Grouping::File;
}

int LiveSetModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int LiveSetModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant LiveSetModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[static_cast<std::size_t>(index.row())];
    const double share = m_live.bytes > 0 ? 100.0 * static_cast<double>(row.bytes) / static_cast<double>(m_live.bytes) : 0.0;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return row.name;
        case BytesColumn:
            return QString::fromStdString(formatBytes(row.bytes));
        case ShareColumn:
            return QString(QString::number(share, 'f', 1) + QLatin1Char('%'));
        case BlocksColumn:
            return QString::number(row.blocks);
        }
        return {};
    case SortRole:
        switch (index.column()) {
        case NameColumn:
            return row.name;
        case BlocksColumn:
            return static_cast<qlonglong>(row.blocks);
        default:
            return static_cast<qlonglong>(row.bytes);
        }
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        return index.column() == NameColumn && !row.toolTip.isEmpty() ? QVariant(row.toolTip) : QVariant();
    case StackRole:
        return row.stack ? QVariant(*row.stack) : QVariant();
    }
    return {};
}

QVariant LiveSetModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        switch (m_grouping) {
        case Grouping::Layer:
            return tr("Layer");
        case Grouping::Category:
            return tr("Category");
        case Grouping::Site:
            return tr("Allocation site");
        case Grouping::File:
            return tr("Source file");
        case Grouping::Pattern:
            return tr("Matching frame");
        case Grouping::Stage:
            return tr("Stage");
        case Grouping::CompileContext:
            return tr("Compile context");
        case Grouping::UserMetadata:
            return tr("User metadata");
        case Grouping::Pool:
            return tr("Memory pool");
        case Grouping::Stream:
            return tr("Stream");
        }
        return {};
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
