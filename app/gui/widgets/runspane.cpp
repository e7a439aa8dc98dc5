// SPDX-License-Identifier: GPL-3.0-or-later
#include "runspane.h"

#include "models/runcomparisonmodel.h"
#include "models/runsmodel.h"
#include "tables.h"

#include <QApplication>
#include <QClipboard>
#include <QMenu>
#include <QSortFilterProxyModel>

namespace peaklens::gui {

namespace {
constexpr int kMaxRunColumnWidth = 260; // a long failure is in the tooltip
} // namespace

RunsPane::RunsPane(QWidget *parent)
    : QSplitter(Qt::Vertical, parent)
    , m_runs(new RunsModel(this))
    , m_comparison(new RunComparisonModel(this))
{
    m_runsView = makeTable(m_runs, this);
    m_runsView->setObjectName(QStringLiteral("runsView"));
    m_runsView->setSortingEnabled(false);
    m_runsView->setTextElideMode(Qt::ElideMiddle);
    m_runsView->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    auto *comparisonProxy = new QSortFilterProxyModel(this);
    comparisonProxy->setSourceModel(m_comparison);
    comparisonProxy->setSortRole(RunComparisonModel::SortRole);
    m_comparisonView = makeTable(comparisonProxy, this);
    m_comparisonView->setObjectName(QStringLiteral("comparisonView"));
    m_comparisonView->sortByColumn(RunComparisonModel::LayerColumn, Qt::AscendingOrder);
    addWidget(m_runsView);
    addWidget(m_comparisonView);
    setStretchFactor(0, 1);
    setStretchFactor(1, 1);
    m_runsView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_runsView, &QWidget::customContextMenuRequested, this, &RunsPane::showMenu);
    connect(m_runsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        compare(current.row());
        Q_EMIT runSelected(current.row());
    });
}

void RunsPane::reset(const DocumentPtr &baseline, std::vector<RunRecord> runs)
{
    m_baseline = baseline;
    m_runs->resetData(std::move(runs));
    m_comparison->resetData(nullptr, nullptr);
    fitColumns();
}

void RunsPane::append(const RunRecord &run)
{
    m_runs->append(run);
    fitColumns();
    selectRow(m_runs->rowCount() - 1);
}

int RunsPane::currentRow() const
{
    return m_runsView->currentIndex().row();
}

void RunsPane::selectRow(int row)
{
    m_runsView->setCurrentIndex(m_runs->index(row, 0));
}

void RunsPane::compare(int row)
{
    const bool valid = row >= 0 && row < m_runs->rowCount();
    m_comparison->resetData(m_baseline, valid ? m_runs->run(row).document : nullptr);
    m_comparisonView->resizeColumnsToContents();
}

void RunsPane::showMenu(const QPoint &position)
{
    const int row = m_runsView->indexAt(position).row();
    if (row < 0 || m_runs->run(row).baseline)
        return;
    const RunRecord &run = m_runs->run(row);
    QMenu menu(this);
    QAction *open = menu.addAction(tr("Open its trace"), this, [this, row] { Q_EMIT openRequested(row); });
    open->setEnabled(!run.tracePaths.isEmpty());
    QAction *save = menu.addAction(run.kept ? tr("Kept in %1").arg(run.folder) : tr("Save to a folder…"), this,
                                   [this, row] { Q_EMIT saveRequested(row); });
    save->setEnabled(!run.kept && !run.tracePaths.isEmpty());
    menu.addAction(tr("Copy its folder's path"), this, [folder = run.folder] { QApplication::clipboard()->setText(folder); })
        ->setEnabled(!run.folder.isEmpty());
    menu.exec(m_runsView->viewport()->mapToGlobal(position));
}

void RunsPane::fitColumns()
{
    m_runsView->resizeColumnsToContents();
    m_runsView->setColumnWidth(RunsModel::RunColumn, std::min(m_runsView->columnWidth(RunsModel::RunColumn), kMaxRunColumnWidth));
}

} // namespace peaklens::gui
