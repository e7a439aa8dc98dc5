// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The blocks each chain layer kept for backward in the measured step, one by one, and what
// the current toggles do with each: saved, or recomputed by which unit. Opened on a
// rerun's trace, it shows what that rerun kept.

#include "tracedocument.h"

#include "core/plan/checkpointschedule.h"

#include <QWidget>

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace peaklens::gui {

class KeptModel;

class KeptPane final : public QWidget
{
    Q_OBJECT

public:
    explicit KeptPane(QWidget *parent = nullptr);

    // The document's chain with `schedule` applied; why not, where it has no chain.
    void showKept(const DocumentPtr &document, const CheckpointSchedule &schedule);
    KeptModel *model() const { return m_model; }
    QString title() const;

private:
    KeptModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLabel *m_title;
};

} // namespace peaklens::gui
