// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Peak against step time over memory budgets, as `peaklens-cli pareto` gives it: the
// cheapest plan for each budget with checkpoints alone (layers, modules inside them), and
// with per-op policies and offloading weighed too, the current toggles marked among them.
// The plans are found off the UI thread while the pane is shown; choosing one (its point
// or its row) applies it.

#include "jobs.h"
#include "tracedocument.h"

#include "core/plan/planner.h"

#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPGraph;
class QLabel;
class QTableWidget;

namespace peaklens::gui {

class ParetoPane final : public QWidget
{
    Q_OBJECT

public:
    explicit ParetoPane(QWidget *parent = nullptr);

    // The document's plans, found anew while the pane is shown (or once it is); none
    // without a model.
    void showDocument(const DocumentPtr &document);
    // Marks the prediction of the current toggles.
    void showCurrent(const CheckpointSchedule &schedule);

    struct Row
    {
        bool everyPolicy = false; // found with per-op policies and offloading weighed
        Plan plan;
    };
    const std::vector<Row> &rows() const { return m_rows; }
    QString title() const;
    // Applies the plan of row `row`, as clicking it does.
    void choose(int row);

Q_SIGNALS:
    void planChosen(const peaklens::CheckpointSchedule &schedule);
    // The plans of the document shown last are in (for tests and screenshots).
    void plansShown();

protected:
    void showEvent(QShowEvent *event) override;

private:
    void findPlans();
    void showRows(std::vector<Row> rows);
    // The current toggles' point, without replotting.
    void placeCurrent();

    QCustomPlot *m_plot;
    QCPGraph *m_whole, *m_every, *m_current;
    QTableWidget *m_table;
    QLabel *m_title;
    Jobs m_jobs;
    DocumentPtr m_document;
    DocumentPtr m_plansFor; // the document whose plans are found or being found
    CheckpointSchedule m_currentSchedule;
    std::vector<Row> m_rows;
    double m_bytesPerUnit = 1;
};

} // namespace peaklens::gui
