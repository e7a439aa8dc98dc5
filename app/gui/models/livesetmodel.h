// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What is live at one moment (the peak, or any clicked time), grouped by layer, category
// or allocation site (named by the user's code), largest first.

#include "tracedocument.h"

#include "core/analysis/peakfinder.h"

#include <QAbstractTableModel>

namespace peaklens::gui {

class LiveSetModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { NameColumn, BytesColumn, ShareColumn, BlocksColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole, StackRole }; // StackRole: the stack id of the group's largest block (sites only)
    enum class Grouping { Layer, Category, Site };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(const DocumentPtr &document, const LiveSet &live, Grouping grouping);
    const LiveSet &liveSet() const { return m_live; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const std::vector<LiveGroup> &groups() const;
    QString groupName(const LiveGroup &group) const;
    QString siteToolTip(const LiveGroup &group) const;

    DocumentPtr m_document;
    LiveSet m_live;
    Grouping m_grouping = Grouping::Layer;
};

} // namespace peaklens::gui
