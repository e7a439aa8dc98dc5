// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// All ranks of a run at once: the cross-rank table (the outlier flagged) above small
// multiples of every rank's allocated memory on one scale, each from its overview's
// envelope, so 64 ranks draw without 64 traces in memory. A click on a row or a small
// chart opens that rank.

#include "models/ranksmodel.h"

#include <QWidget>

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace peaklens::gui {

class RankStrips;

class RanksPane final : public QWidget
{
    Q_OBJECT

public:
    explicit RanksPane(QWidget *parent = nullptr);

    void setTable(CrossRankTable table);
    RanksModel *model() const { return m_model; }
    // Marks the rank shown in the window (a row of the table).
    void setCurrent(int row);

Q_SIGNALS:
    void rankChosen(int row);

private:
    RanksModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLabel *m_title;
    RankStrips *m_strips;
};

} // namespace peaklens::gui
