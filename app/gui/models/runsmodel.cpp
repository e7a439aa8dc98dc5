#include "runsmodel.h"

#include "core/trace/units.h"

#include <cmath>

namespace peaklens::gui {

namespace {

std::optional<double> relativeError(double predicted, std::optional<double> measured)
{
    if (!measured || *measured == 0)
        return std::nullopt;
    return 100.0 * (predicted - *measured) / *measured;
}

QString percentText(std::optional<double> percent)
{
    return percent ? QStringLiteral("%1%2 %").arg(*percent >= 0 ? QStringLiteral("+") : QString()).arg(*percent, 0, 'f', 1)
                   : QString();
}

} // namespace

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
    const std::optional<double> measuredPeak =
        run.measuredPeakBytes ? std::optional<double>(static_cast<double>(*run.measuredPeakBytes)) : std::nullopt;
    const double predictedStepMs = static_cast<double>(run.predictedStepNs) / 1e6;
    const auto peakError = relativeError(static_cast<double>(run.predictedPeakBytes), measuredPeak);
    const auto stepError = relativeError(predictedStepMs, run.measuredStepMs);

    if (role == Qt::ToolTipRole && index.column() == GradientsColumn)
        return run.gradientDifference ? tr("Largest gradient difference against a step without checkpointing, relative to the "
                                           "largest gradient of that parameter")
                                      : QString();
    if (role == Qt::ToolTipRole)
        return run.outcome.isEmpty() ? run.checkpoint.join(QStringLiteral(", ")) : run.outcome;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= PredictedPeakColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role == SortRole && index.column() == RunColumn)
        return index.row();
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    switch (index.column()) {
    case RunColumn: return run.outcome.isEmpty() ? run.label : run.label + QStringLiteral(" — ") + run.outcome;
    case CheckpointColumn:
        return run.checkpoint.isEmpty() ? tr("none") : tr("%n layer(s)", nullptr, int(run.checkpoint.size()));
    case PredictedPeakColumn: return QString::fromStdString(formatBytes(run.predictedPeakBytes));
    case MeasuredPeakColumn:
        return run.measuredPeakBytes ? QString::fromStdString(formatBytes(*run.measuredPeakBytes)) : QString();
    case PeakErrorColumn: return percentText(peakError);
    case PredictedStepColumn: return QString::number(predictedStepMs, 'f', 1);
    case MeasuredStepColumn: return run.measuredStepMs ? QString::number(*run.measuredStepMs, 'f', 1) : QString();
    case StepErrorColumn: return percentText(stepError);
    case GradientsColumn:
        if (!run.gradientDifference)
            return QString();
        if (*run.gradientDifference == 0)
            return tr("identical");
        return (run.gradientsAgree ? tr("≤ %1") : tr("DIFFER by %1")).arg(*run.gradientDifference, 0, 'g', 2);
    }
    return {};
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case RunColumn: return tr("Run");
    case CheckpointColumn: return tr("Checkpoint");
    case PredictedPeakColumn: return tr("Predicted peak");
    case MeasuredPeakColumn: return tr("Measured peak");
    case PeakErrorColumn: return tr("Δ peak");
    case PredictedStepColumn: return tr("Predicted ms");
    case MeasuredStepColumn: return tr("Measured ms");
    case StepErrorColumn: return tr("Δ step");
    case GradientsColumn: return tr("Gradients");
    }
    return {};
}

} // namespace peaklens::gui
