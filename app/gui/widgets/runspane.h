// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Runs tab: the baseline and every rerun in a table, and under it the selected run
// compared with the baseline layer by layer. Selecting a run tells the window, which
// brings back that run's toggles, prediction and measured curve.

#include "runrecord.h"

#include <QSplitter>

class QTableView;

namespace peaklens::gui {

class RunComparisonModel;
class RunsModel;

class RunsPane final : public QSplitter
{
    Q_OBJECT

public:
    explicit RunsPane(QWidget *parent = nullptr);

    RunsModel *runs() const { return m_runs; }
    RunComparisonModel *comparison() const { return m_comparison; }
    // A new trace: its own row (or none without a model), nothing compared.
    void reset(const DocumentPtr &baseline, std::vector<RunRecord> runs);
    // Adds a run and selects it.
    void append(const RunRecord &run);
    int currentRow() const;
    void selectRow(int row);

Q_SIGNALS:
    // -1 when nothing is selected.
    void runSelected(int row);
    // From a rerun's context menu: open its trace in the window, or save it to a folder.
    void openRequested(int row);
    void saveRequested(int row);

private:
    void compare(int row);
    void showMenu(const QPoint &position);
    void fitColumns();

    DocumentPtr m_baseline;
    RunsModel *m_runs;
    RunComparisonModel *m_comparison;
    QTableView *m_runsView;
    QTableView *m_comparisonView;
};

} // namespace peaklens::gui
