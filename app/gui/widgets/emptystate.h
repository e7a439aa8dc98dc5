// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the window shows before a trace is open: what to do next (open a trace or record
// one, or drop files), the formats it reads, and why the last file could not be opened.

#include <QWidget>

class QLabel;

namespace peaklens::gui {

class EmptyState final : public QWidget
{
    Q_OBJECT

public:
    EmptyState(QAction *open, QAction *record, QWidget *parent = nullptr);

    // Why the file just tried could not be opened; empty hides it.
    void showProblem(const QString &problem);
    QString problem() const;

private:
    QLabel *m_problem;
};

} // namespace peaklens::gui
