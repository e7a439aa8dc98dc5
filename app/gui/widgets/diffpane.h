// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The open trace (A) compared with another (B) at their peaks: the peaks, reserved peaks and
// step times side by side, and what changed by layer, by allocation site and by category.
// The window lays B's curve over A's timeline on aligned steps.

#include "core/analysis/tracediff.h"

#include <QWidget>

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
    QString headline() const;
    DiffModel *byLayer() const { return m_models[0]; }
    DiffModel *bySite() const { return m_models[1]; }
    DiffModel *byCategory() const { return m_models[2]; }

Q_SIGNALS:
    void closeRequested();

private:
    QLabel *m_headline;
    QTabWidget *m_tables;
    DiffModel *m_models[3];
};

} // namespace peaklens::gui
