// SPDX-License-Identifier: GPL-3.0-or-later
#include "paretopane.h"

#include "chartstyle.h"

#include "core/trace/units.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>

namespace peaklens::gui {

namespace {

enum Column { PoliciesColumn, PeakColumn, StepTimeColumn, AddedColumn, PlanColumn, ColumnCount };

// What a plan does beyond checkpointing whole layers, in a few words.
QString policiesOf(const CheckpointSchedule &schedule)
{
    if (schedule.empty())
        return ParetoPane::tr("none");
    QStringList kinds;
    const auto uses = [&](auto which) { return std::any_of(schedule.begin(), schedule.end(), which); };
    if (uses([](const CheckpointUnit &unit) { return unit.isPart(); }))
        kinds << ParetoPane::tr("modules");
    if (uses([](const CheckpointUnit &unit) { return !unit.saved.empty(); }))
        kinds << ParetoPane::tr("per-op");
    if (uses([](const CheckpointUnit &unit) { return unit.kept == KeptForm::Host; }))
        kinds << ParetoPane::tr("offload");
    if (uses([](const CheckpointUnit &unit) { return unit.kept == KeptForm::Bfloat16; }))
        kinds << ParetoPane::tr("bf16");
    return kinds.isEmpty() ? ParetoPane::tr("whole layers") : kinds.join(QStringLiteral(", "));
}

QTableWidgetItem *item(const QString &text, double sortKey = 0)
{
    auto *cell = new QTableWidgetItem(text);
    cell->setData(Qt::UserRole, sortKey);
    cell->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return cell;
}

QCPGraph *styledGraph(QCustomPlot *plot, const QString &name, QColor colour, QCPScatterStyle::ScatterShape shape,
                      Qt::PenStyle line)
{
    QCPGraph *graph = plot->addGraph();
    graph->setName(name);
    graph->setPen(QPen(colour, 1.5, line));
    graph->setLineStyle(line == Qt::NoPen ? QCPGraph::lsNone : QCPGraph::lsStepLeft);
    graph->setScatterStyle(QCPScatterStyle(shape, colour, colour, 7));
    graph->setSelectable(QCP::stSingleData);
    return graph;
}

} // namespace

ParetoPane::ParetoPane(QWidget *parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_table(new QTableWidget(0, ColumnCount, this))
    , m_title(new QLabel(this))
{
    m_plot->setObjectName(QStringLiteral("paretoPlot"));
    m_plot->setBackground(palette().base());
    m_plot->xAxis->setLabel(tr("step time (ms)"));
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new NiceTicker));
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new NiceTicker));
    placeLegendBelow(m_plot);
    m_plot->setInteractions(QCP::iSelectPlottables);
    m_whole = styledGraph(m_plot, tr("Checkpoints (layers, modules)"), paletteColor(palette::seriesColor(0)),
                          QCPScatterStyle::ssCircle, Qt::SolidLine);
    m_every = styledGraph(m_plot, tr("Also per-op policies and offloading"), paletteColor(palette::seriesColor(1)),
                          QCPScatterStyle::ssDiamond, Qt::DashLine);
    m_current =
        styledGraph(m_plot, tr("Current toggles"), paletteColor(palette::kPeak), QCPScatterStyle::ssCrossCircle, Qt::NoPen);
    m_current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCrossCircle, paletteColor(palette::kPeak), 12));
    m_current->setSelectable(QCP::stNone);
    connect(m_plot, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable *plottable, int index, QMouseEvent *) {
        // The rows hold the plans of checkpoints alone first, each series in step-time order.
        const bool whole = plottable == m_whole;
        if (!whole && plottable != m_every)
            return;
        int seen = -1;
        for (std::size_t r = 0; r < m_rows.size(); ++r) {
            if (m_rows[r].everyPolicy != whole && ++seen == index) {
                choose(static_cast<int>(r));
                return;
            }
        }
    });

    m_table->setObjectName(QStringLiteral("paretoTable"));
    m_table->setHorizontalHeaderLabels({tr("Policies"), tr("Peak"), tr("Step time"), tr("Added"), tr("Plan")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(PlanColumn, QHeaderView::Stretch);
    connect(m_table, &QTableWidget::cellClicked, this,
            [this](int row, int) { choose(m_table->item(row, PoliciesColumn)->data(Qt::UserRole + 1).toInt()); });

    m_title->setObjectName(QStringLiteral("paretoTitle"));
    m_title->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(m_plot, 3);
    layout->addWidget(m_table, 2);
}

void ParetoPane::showDocument(const DocumentPtr &document)
{
    m_document = document;
    m_jobs.drop();
    showRows({});
    if (!document || !document->model) {
        m_title->setText(document
                             ? tr("No layers to checkpoint in this trace: %1").arg(QString::fromStdString(document->modelProblem))
                             : QString());
        return;
    }
    m_title->setText(tr("Finding the cheapest plan for each budget…"));
    m_plansFor.reset();
    if (isVisible())
        findPlans();
}

void ParetoPane::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_document && m_document->model && m_plansFor != m_document)
        findPlans();
}

void ParetoPane::findPlans()
{
    const DocumentPtr document = m_document;
    m_plansFor = document;
    m_jobs.start(
        [document](const Progress &progress) {
            std::vector<Row> rows;
            PlannerOptions every;
            every.perOpPolicies = true;
            every.offload = true;
            for (const auto &[everyPolicy, options] : {std::pair(false, PlannerOptions{}), std::pair(true, every)}) {
                if (progress.isCancelled())
                    break;
                for (Plan &plan : paretoSweep(*document->model, 24, options))
                    rows.push_back({everyPolicy, std::move(plan)});
            }
            return rows;
        },
        [this, document](std::vector<Row> rows) {
            if (document != m_document)
                return;
            const std::size_t layers = document->model->layers.size();
            m_title->setText(tr("Peak against step time over budgets, %n checkpointable layers: the cheapest plan for "
                                "each, with checkpoints alone and with per-op policies and offloading too. Click a plan to "
                                "apply it.",
                                nullptr, static_cast<int>(layers)));
            showRows(std::move(rows));
            Q_EMIT plansShown();
        },
        [this](const QString &message) { m_title->setText(tr("No plans: %1").arg(message)); });
}

void ParetoPane::showRows(std::vector<Row> rows)
{
    // Each series in step-time order, as the plot keeps its points.
    std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
        return a.everyPolicy != b.everyPolicy ? !a.everyPolicy : a.plan.prediction.stepTimeNs < b.plan.prediction.stepTimeNs;
    });
    m_rows = std::move(rows);
    std::int64_t highest = 1;
    for (const Row &row : m_rows)
        highest = std::max(highest, row.plan.prediction.peakBytes);
    QString unit;
    std::tie(m_bytesPerUnit, unit) = byteUnit(highest);
    m_plot->yAxis->setLabel(tr("peak (%1)").arg(unit));
    QVector<double> wholeX, wholeY, everyX, everyY;
    m_table->setSortingEnabled(false);
    m_table->setRowCount(static_cast<int>(m_rows.size()));
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
        const Plan &plan = m_rows[r].plan;
        const double ms = static_cast<double>(plan.prediction.stepTimeNs) / 1e6;
        const double peak = static_cast<double>(plan.prediction.peakBytes) / m_bytesPerUnit;
        (m_rows[r].everyPolicy ? everyX : wholeX).push_back(ms);
        (m_rows[r].everyPolicy ? everyY : wholeY).push_back(peak);
        const int row = static_cast<int>(r);
        const auto bytes = static_cast<double>(plan.prediction.peakBytes);
        QTableWidgetItem *policies = item(policiesOf(plan.schedule));
        policies->setData(Qt::UserRole + 1, row);
        m_table->setItem(row, PoliciesColumn, policies);
        m_table->setItem(row, PeakColumn, item(QString::fromStdString(formatBytes(plan.prediction.peakBytes)), bytes));
        m_table->setItem(row, StepTimeColumn, item(QString::fromStdString(formatDuration(plan.prediction.stepTimeNs)), ms));
        m_table->setItem(row, AddedColumn,
                         item(QStringLiteral("+") + QString::fromStdString(formatDuration(plan.prediction.addedTimeNs))));
        const QString units =
            m_document && m_document->model ? QString::fromStdString(strategyOf(*m_document->model, plan).toString()) : QString();
        m_table->setItem(row, PlanColumn, item(units == QLatin1String("none") ? tr("no checkpoints") : units));
    }
    m_whole->setData(wholeX, wholeY, true);
    m_every->setData(everyX, everyY, true);
    placeCurrent(); // in the axis's unit now
    m_plot->rescaleAxes();
    m_plot->xAxis->scaleRange(1.1);
    m_plot->yAxis->scaleRange(1.1);
    m_plot->replot();
}

void ParetoPane::showCurrent(const CheckpointSchedule &schedule)
{
    m_currentSchedule = schedule;
    placeCurrent();
    m_plot->replot();
}

void ParetoPane::placeCurrent()
{
    m_current->data()->clear();
    if (!m_rows.empty() && m_document && m_document->model) {
        const Prediction prediction = peaklens::predict(*m_document->model, m_currentSchedule);
        m_current->addData(static_cast<double>(prediction.stepTimeNs) / 1e6,
                           static_cast<double>(prediction.peakBytes) / m_bytesPerUnit);
    }
}

QString ParetoPane::title() const
{
    return m_title->text();
}

void ParetoPane::choose(int row)
{
    if (row < 0 || static_cast<std::size_t>(row) >= m_rows.size())
        return;
    m_table->selectRow(row);
    Q_EMIT planChosen(m_rows[static_cast<std::size_t>(row)].plan.schedule);
}

} // namespace peaklens::gui
