// SPDX-License-Identifier: GPL-3.0-or-later
#include "runsmodel.h"

#include "core/trace/units.h"

namespace peaklens::gui {

namespace {

std::optional<double> relativeError(double predicted, std::optional<double> measured)
{
    if (!measured || *measured == 0)
        return std::nullopt;
    return 100.0 * (predicted - *measured) / *measured;
}

// A measured figure and, in brackets, how far the prediction was from it.
QString withError(const QString &measured, std::optional<double> errorPercent)
{
    return errorPercent ? QStringLiteral("%1 (%2)").arg(measured, QString::fromStdString(signedPercentText(*errorPercent)))
                        : measured;
}

QString millisecondsText(double ms)
{
    return QString::number(ms, 'f', ms < 10 ? 2 : 1);
}

std::optional<double> measuredPeak(const RunRecord &run)
{
    return run.row.measured.peakAllocatedBytes ? std::optional<double>(double(*run.row.measured.peakAllocatedBytes))
                                               : std::nullopt;
}

} // namespace

QString RunsModel::changeText(const StepTimeComparison &change)
{
    return QString::fromStdString(peaklens::changeText(change));
}

void RunsModel::resetData(std::vector<RunRecord> runs)
{
    beginResetModel();
    m_runs = std::move(runs);
    endResetModel();
}

void RunsModel::append(const RunRecord &run)
{
    const int row = rowCount();
    beginInsertRows({}, row, row);
    m_runs.push_back(run);
    endInsertRows();
}

void RunsModel::replace(int row, const RunRecord &run)
{
    m_runs.at(static_cast<std::size_t>(row)) = run;
    Q_EMIT dataChanged(index(row, 0), index(row, NumColumns - 1));
}

int RunsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int RunsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NumColumns;
}

QVariant RunsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RunRecord &run = m_runs[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::ToolTipRole:
        return toolTip(run, index.column());
    case Qt::TextAlignmentRole:
        return index.column() >= PredictedPeakColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case SortRole:
        if (index.column() == RunColumn)
            return index.row();
        return display(run, index.column());
    case Qt::DisplayRole:
        return display(run, index.column());
    }
    return {};
}

QVariant RunsModel::display(const RunRecord &run, int column) const
{
    const StepChange step = run.stepChange();
    switch (column) {
    case RunColumn:
        return run.outcome().isEmpty() ? run.label : run.label + QStringLiteral(" — ") + run.outcome();
    case CheckpointColumn:
        return run.checkpoint().isEmpty() ? tr("none") : tr("%n unit(s)", nullptr, int(run.checkpoint().size()));
    case PredictedPeakColumn:
        return QString::fromStdString(formatBytes(run.row.predicted.peakBytes));
    case MeasuredPeakColumn:
        if (!run.row.measured.peakAllocatedBytes)
            return QString();
        return withError(QString::fromStdString(formatBytes(*run.row.measured.peakAllocatedBytes)),
                         relativeError(double(run.row.predicted.peakBytes), measuredPeak(run)));
    case BaselineStepColumn:
        return step.baselineHere ? millisecondsText(step.baselineHere->medianMs) : QString();
    case MeasuredStepColumn:
        return step.run ? millisecondsText(step.run->medianMs) : QString();
    case PredictedChangeColumn:
        return run.baseline ? tr("reference") : QString::fromStdString(signedPercentText(step.predictedPercent));
    case MeasuredChangeColumn:
        if (run.baseline)
            return tr("reference");
        return step.measured ? changeText(*step.measured) : QString();
    case GradientsColumn:
        if (!run.row.measured.gradients)
            return QString();
        if (run.row.measured.gradients->maxRelativeDifference == 0)
            return tr("identical");
        return (run.row.measured.gradients->agree ? tr("≤ %1") : tr("DIFFER by %1"))
            .arg(run.row.measured.gradients->maxRelativeDifference, 0, 'g', 2);
    }
    return {};
}

QString RunsModel::toolTip(const RunRecord &run, int column) const
{
    switch (column) {
    case RunColumn:
        if (run.baseline)
            return tr("The trace as recorded: what the reruns' predictions start from");
        [[fallthrough]];
    case CheckpointColumn:
        if (!run.outcome().isEmpty())
            return run.outcome();
        return run.checkpoint().isEmpty() ? tr("Nothing checkpointed") : run.checkpoint().join(QStringLiteral(", "));
    case MeasuredPeakColumn:
        return tr("Measured peak (the prediction's error against it)");
    case BaselineStepColumn:
    case MeasuredStepColumn: {
        const StepChange step = run.stepChange();
        const std::optional<TimingSpread> &spread = column == BaselineStepColumn ? step.baselineHere : step.run;
        if (!spread)
            return QString();
        return tr("Median of %n step(s), from %1 to %2 ms", nullptr, int(spread->samples))
            .arg(millisecondsText(spread->minMs), millisecondsText(spread->maxMs));
    }
    case PredictedChangeColumn:
        return run.baseline ? QString()
                            : tr("What the cost model predicts these toggles do to the step time, as the what-if bar said");
    case MeasuredChangeColumn:
        if (const auto change = run.stepChange().measured) {
            return tr("This run's step time against the baseline's toggles measured again beside it on this machine "
                      "(%1 steps each%2): the median change and the range of the changes. When the range includes "
                      "no change, the difference cannot be told from noise; when that range is also wide, the machine "
                      "was too busy to tell.")
                .arg(change->run.samples)
                .arg(change->paired ? tr(", interleaved step by step") : QString());
        }
        return run.baseline ? tr("The trace as recorded: what the reruns' predictions start from") : QString();
    case GradientsColumn:
        return run.row.measured.gradients ? tr("Largest gradient difference against a step without checkpointing, relative to "
                                               "the largest gradient of that parameter")
                                          : QString();
    }
    return {};
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case MeasuredPeakColumn:
            return tr("The measured peak; in brackets the prediction error: the predicted peak against it");
        case BaselineStepColumn:
            return tr("The baseline's toggles run again beside the rerun, on the same machine: its median step");
        case MeasuredStepColumn:
            return tr("The run's median step");
        case PredictedChangeColumn:
            return tr("The change of step time the cost model predicts: the what-if bar's figure");
        case MeasuredChangeColumn:
            return tr("The change of step time measured against the baseline run beside it, with the range of the changes");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case RunColumn:
        return tr("Run");
    case CheckpointColumn:
        return tr("Checkpointed");
    case PredictedPeakColumn:
        return tr("Peak\npredicted");
    case MeasuredPeakColumn:
        return tr("Peak measured\n(prediction error)");
    case BaselineStepColumn:
        return tr("Baseline step ms\n(run beside it)");
    case MeasuredStepColumn:
        return tr("Step ms\nmeasured");
    case PredictedChangeColumn:
        return tr("Step change\npredicted");
    case MeasuredChangeColumn:
        return tr("Step change\nmeasured");
    case GradientsColumn:
        return tr("Gradients");
    }
    return {};
}

} // namespace peaklens::gui
