// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The open trace (A) compared with another (B) at their peaks: the peaks, reserved peaks and
// step times side by side, and what changed by layer, by allocation site, by category and by a
// grouping of blockgroups.h chosen in its last tab (source file, stage, compile context,
// user metadata, memory pool, stream): new in B, gone from A, grew or shrank.
// The window lays B's curve over A's timeline on aligned steps.

#include "core/analysis/tracediff.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QTabWidget;

namespace peaklens::gui {

class DiffModel;

class DiffPane final : public QWidget
{
    Q_OBJECT

public:
    explicit DiffPane(QWidget *parent = nullptr);

    void showDiff(const TraceDiff &diff, const QString &nameA, const QString &nameB);
    // The rows of the diff by the grouping grouping() names (TraceDiff::byGroup).
    void showGroupRows(const std::vector<DiffRow> &rows);
    BlockGrouping grouping() const;
    QString headline() const;
    DiffModel *byLayer() const { return m_models[0]; }
    DiffModel *bySite() const { return m_models[1]; }
    DiffModel *byCategory() const { return m_models[2]; }
    DiffModel *byGroup() const { return m_models[3]; }

Q_SIGNALS:
    void closeRequested();
    // Another grouping was chosen: its rows are for the window to work out.
    void groupingChosen();

private:
    QLabel *m_headline;
    QTabWidget *m_tables;
    QComboBox *m_grouping;
    DiffModel *m_models[4];
    void fitTable(int tab);
};

} // namespace peaklens::gui
