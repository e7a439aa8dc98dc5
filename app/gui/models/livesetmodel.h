// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What is live at one moment (the peak, or any clicked time), grouped by layer, category,
// allocation site (named by the user's code), or any grouping of blockgroups.h (source file,
// the frames a pattern matches, stage, compile context, user metadata, memory pool,
// stream), largest first.

#include "tracedocument.h"

#include "core/analysis/blockgroups.h"
#include "core/analysis/peakfinder.h"

#include <QAbstractTableModel>

#include <optional>

namespace peaklens::gui {

class LiveSetModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { NameColumn, BytesColumn, ShareColumn, BlocksColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole, StackRole }; // StackRole: the stack id of the group's largest block (sites only)
    // The order of the live set pane's choices.
    enum class Grouping { Layer, Category, Site, File, Pattern, Stage, CompileContext, UserMetadata, Pool, Stream };
    // The grouping of blockgroups.h a choice stands for, from File on.
    static std::optional<BlockGrouping::Kind> blockKind(Grouping grouping);
    static Grouping groupingOf(BlockGrouping::Kind kind);

    using QAbstractTableModel::QAbstractTableModel;

    // `pattern`: for Grouping::Pattern, a regular expression (blockgroups.h). When it is
    // none, no rows, and problem() says why.
    void resetData(const DocumentPtr &document, const LiveSet &live, Grouping grouping, const QString &pattern = {});
    const LiveSet &liveSet() const { return m_live; }
    const QString &problem() const { return m_problem; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        QString name;
        std::int64_t bytes = 0;
        std::int64_t blocks = 0;
        std::optional<std::uint32_t> stack; // sites: the largest block's
        QString toolTip;
    };
    std::vector<Row> rowsOf(const DocumentPtr &document, const LiveSet &live, Grouping grouping, const QString &pattern) const;

    LiveSet m_live;
    Grouping m_grouping = Grouping::Layer;
    std::vector<Row> m_rows;
    QString m_problem;
};

} // namespace peaklens::gui
