// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The app's tables: sortable, one row selected at a time, compact rows.

#include <QHeaderView>
#include <QTableView>

namespace peaklens::gui {

inline QTableView *makeTable(QAbstractItemModel *model, QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setModel(model);
    view->setSortingEnabled(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(false);
    view->setWordWrap(false);
    return view;
}

} // namespace peaklens::gui
