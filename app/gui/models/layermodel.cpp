// SPDX-License-Identifier: GPL-3.0-or-later
#include "layermodel.h"

#include "core/plan/operatoroutputs.h"
#include "core/trace/units.h"

#include <algorithm>

namespace peaklens::gui {

namespace {
const std::vector<std::uint32_t> kNoChildren;

// "addmm" for aten.addmm.default, "mul.Tensor" for aten.mul.Tensor.
QString shortOperator(const std::string &op)
{
    QString name = QString::fromStdString(op);
    if (name.startsWith(QLatin1String("aten.")))
        name.remove(0, 5);
    if (name.endsWith(QLatin1String(".default")))
        name.chop(8);
    return name;
}

// A policy's operators, those whose outputs keep most first.
QStringList policyOperators(const OperatorProfile &profile, const std::vector<std::string> &saved)
{
    std::vector<const OperatorOutputs *> kept;
    for (const OperatorOutputs &outputs : profile.outputs) {
        if (std::binary_search(saved.begin(), saved.end(), outputs.op))
            kept.push_back(&outputs);
    }
    std::stable_sort(kept.begin(), kept.end(), [](const auto *a, const auto *b) { return a->bytes > b->bytes; });
    QStringList names;
    for (const OperatorOutputs *outputs : kept)
        names << shortOperator(outputs->op);
    return names;
}

// "Recompute all", "Save addmm, gelu" (the drop-down's entries).
QString policyLabel(const OperatorProfile &profile, const std::vector<std::string> &saved)
{
    if (saved.empty())
        return LayerModel::tr("Recompute all");
    return LayerModel::tr("Save %1").arg(policyOperators(profile, saved).join(QLatin1String(", ")));
}

// "All", "Save addmm +1": what the column shows, narrow.
QString policyShortLabel(const OperatorProfile &profile, const std::vector<std::string> &saved)
{
    if (saved.empty())
        return LayerModel::tr("All");
    const QStringList names = policyOperators(profile, saved);
    if (names.isEmpty())
        return LayerModel::tr("Save nothing");
    return names.size() == 1 ? LayerModel::tr("Save %1").arg(names.front())
                             : LayerModel::tr("Save %1 +%2").arg(names.front()).arg(names.size() - 1);
}
} // namespace

void LayerModel::resetData(const DocumentPtr &document)
{
    beginResetModel();
    m_document = document;
    rebuildTree();
    m_chainIndex.assign(document ? document->trace->layers.size() : 0, -1);
    m_partIndex.assign(m_chainIndex.size(), -1);
    m_checkpoint.clear();
    m_parts.clear();
    m_policies.clear();
    m_saved.clear();
    m_kept.clear();
    m_peakBytes = 0;
    if (document) {
        if (document->model) {
            const auto &chain = document->model->layers;
            for (std::size_t i = 0; i < chain.size(); ++i) {
                m_chainIndex[chain[i].layer] = static_cast<int>(i);
                for (std::size_t c = 0; c < chain[i].parts.size(); ++c) {
                    m_chainIndex[chain[i].parts[c].layer] = static_cast<int>(i);
                    m_partIndex[chain[i].parts[c].layer] = static_cast<int>(c);
                }
            }
            m_checkpoint.assign(chain.size(), false);
            m_parts.assign(chain.size(), 0);
            m_saved.assign(chain.size(), {});
            m_kept.assign(chain.size(), KeptForm::AsMade);
            for (const ChainLayer &layer : chain)
                m_policies.push_back(leadingPolicies(layer.operators));
        }
        const auto &peak = document->summary.peak;
        if (peak.primary)
            m_peakBytes = peak.devices[*peak.primary].allocatedBytes;
    }
    endResetModel();
}

void LayerModel::setFlat(bool flat)
{
    if (flat == m_flat)
        return;
    beginResetModel();
    m_flat = flat;
    rebuildTree();
    endResetModel();
}

void LayerModel::rebuildTree()
{
    const std::size_t count = m_document ? m_document->trace->layers.size() : 0;
    m_topLevel.clear();
    m_children.assign(count, {});
    m_row.assign(count, 0);
    for (std::uint32_t layer = 0; layer < count; ++layer) {
        const std::uint32_t parent = m_document->trace->layers[layer].parent;
        auto &siblings = m_flat || parent >= count ? m_topLevel : m_children[parent];
        m_row[layer] = static_cast<int>(siblings.size());
        siblings.push_back(layer);
    }
}

const std::vector<std::uint32_t> &LayerModel::childrenOf(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return m_topLevel;
    return parent.column() == 0 ? m_children[static_cast<std::size_t>(parent.internalId())] : kNoChildren;
}

QModelIndex LayerModel::index(int row, int column, const QModelIndex &parent) const
{
    const auto &children = childrenOf(parent);
    if (row < 0 || column < 0 || column >= NumColumns || row >= static_cast<int>(children.size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>(children[static_cast<std::size_t>(row)]));
}

QModelIndex LayerModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || m_flat)
        return {};
    const std::uint32_t parent = m_document->trace->layers[static_cast<std::size_t>(child.internalId())].parent;
    if (parent >= m_row.size())
        return {};
    return createIndex(m_row[parent], 0, static_cast<quintptr>(parent));
}

CheckpointSchedule LayerModel::schedule() const
{
    CheckpointSchedule schedule;
    for (std::size_t k = 0; k < m_checkpoint.size(); ++k) {
        if (m_checkpoint[k])
            schedule.push_back({k, k, {}, kWholeLayer, m_saved[k]});
        else if (m_kept[k] != KeptForm::AsMade)
            schedule.push_back({k, k, {}, kWholeLayer, {}, m_kept[k]});
        for (std::size_t c = 0; c < 64; ++c) {
            if (m_parts[k] >> c & 1u)
                schedule.push_back({k, k, {}, c});
        }
    }
    return schedule;
}

void LayerModel::setSchedule(const CheckpointSchedule &schedule)
{
    const std::vector<bool> whole = toggledPositions(schedule, m_checkpoint.size());
    const std::vector<std::uint64_t> parts = partMasks(schedule, m_checkpoint.size());
    std::vector<std::vector<std::string>> saved(m_checkpoint.size());
    std::vector<KeptForm> kept(m_checkpoint.size(), KeptForm::AsMade);
    for (const CheckpointUnit &unit : schedule) {
        if (unit.first >= saved.size())
            continue;
        if (!unit.saved.empty())
            saved[unit.first] = unit.saved;
        if (unit.runsPlainly())
            kept[unit.first] = unit.kept;
    }
    if (whole == m_checkpoint && parts == m_parts && saved == m_saved && kept == m_kept)
        return;
    m_checkpoint = whole;
    m_parts = parts;
    m_saved = std::move(saved);
    m_kept = std::move(kept);
    showTicks();
}

void LayerModel::showTicks()
{
    // Only chain layers and their parts change; tell the views about each.
    for (const ChainLayer &layer : m_document->model->layers) {
        QModelIndex box = indexOfLayer(layer.layer, CheckpointColumn);
        Q_EMIT dataChanged(box, box, {Qt::CheckStateRole});
        const QModelIndex policy = indexOfLayer(layer.layer, PolicyColumn);
        Q_EMIT dataChanged(policy, policy, {Qt::DisplayRole, Qt::EditRole});
        for (const ChainPart &part : layer.parts) {
            box = indexOfLayer(part.layer, CheckpointColumn);
            Q_EMIT dataChanged(box, box, {Qt::CheckStateRole});
        }
    }
}

bool LayerModel::isTicked(std::size_t row) const
{
    const auto chain = static_cast<std::size_t>(m_chainIndex[row]);
    return m_partIndex[row] < 0 ? bool(m_checkpoint[chain]) : (m_parts[chain] >> m_partIndex[row] & 1u) || m_checkpoint[chain];
}

int LayerModel::policyChoice(std::size_t chain) const
{
    const auto &policies = m_policies[chain];
    if (m_kept[chain] != KeptForm::AsMade)
        return static_cast<int>(policies.size()) + (m_kept[chain] == KeptForm::Bfloat16 ? 1 : 2);
    const auto found = std::find(policies.begin(), policies.end(), m_saved[chain]);
    return m_saved[chain].empty() || found == policies.end() ? 0 : static_cast<int>(found - policies.begin()) + 1;
}

bool LayerModel::isHeldWhole(std::size_t row) const
{
    return m_partIndex[row] >= 0 && m_checkpoint[static_cast<std::size_t>(m_chainIndex[row])];
}

QModelIndex LayerModel::indexOfLayer(std::uint32_t layer, int column) const
{
    if (layer >= m_row.size())
        return {};
    return createIndex(m_row[layer], column, static_cast<quintptr>(layer));
}

int LayerModel::rowCount(const QModelIndex &parent) const
{
    return static_cast<int>(childrenOf(parent).size());
}

int LayerModel::columnCount(const QModelIndex &) const
{
    return NumColumns;
}

QVariant LayerModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const auto row = static_cast<std::size_t>(index.internalId());
    const Layer &layer = m_document->trace->layers[row];
    const LayerStats &stats = m_document->summary.layers[row];
    const int chain = m_chainIndex[row];
    const auto milliseconds = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
    const double share =
        m_peakBytes > 0 ? 100.0 * static_cast<double>(stats.activationBytes) / static_cast<double>(m_peakBytes) : 0.0;

    if (role == LayerRole)
        return static_cast<uint>(row);
    if (role == Qt::CheckStateRole && index.column() == CheckpointColumn && chain >= 0)
        return isTicked(row) ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= ActivationColumn && index.column() <= BackwardColumn
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant();
    if (role == Qt::ToolTipRole && index.column() == NameColumn)
        return QString::fromStdString(layer.path);
    // A chain layer whose measured time was a warm-up: predictions take the chain's median.
    const ChainLayer *chainLayer = chain >= 0 && m_document->model->layers[std::size_t(chain)].layer == row
                                       ? &m_document->model->layers[std::size_t(chain)]
                                       : nullptr;
    const bool warmUpForward = chainLayer && chainLayer->outlierForwardNs;
    const bool warmUpBackward = chainLayer && chainLayer->outlierBackwardNs;
    if (role == Qt::ToolTipRole
        && ((index.column() == ForwardColumn && warmUpForward) || (index.column() == BackwardColumn && warmUpBackward)))
        return tr("A warm-up: %1 ms in the step the plan reads, far above the chain's other layers; predictions take the "
                  "chain's median, %2 ms")
            .arg(milliseconds(index.column() == ForwardColumn ? *chainLayer->outlierForwardNs : *chainLayer->outlierBackwardNs),
                 0, 'f', 2)
            .arg(milliseconds(index.column() == ForwardColumn ? chainLayer->forwardNs : chainLayer->backwardNs), 0, 'f', 2);
    if (index.column() == PolicyColumn && chainLayer) {
        const auto k = static_cast<std::size_t>(chain);
        switch (role) {
        case Qt::DisplayRole:
        case SortRole:
            if (m_kept[k] != KeptForm::AsMade)
                return QString::fromLatin1(keptFormName(m_kept[k]));
            return m_checkpoint[k] ? policyShortLabel(chainLayer->operators, m_saved[k]) : QString();
        case Qt::EditRole:
            return policyChoice(k);
        case PolicyChoicesRole: {
            QStringList choices{policyLabel(chainLayer->operators, {})};
            for (const auto &policy : m_policies[k])
                choices << policyLabel(chainLayer->operators, policy);
            choices << tr("No checkpoint: keep in bfloat16") << tr("No checkpoint: offload to host memory");
            return choices;
        }
        case Qt::ToolTipRole:
            return tr("What %1 does with what its forward keeps for backward: recompute all of it (a checkpoint), all "
                      "but the outputs of the operators a per-op policy saves (PyTorch's selective activation "
                      "checkpointing; none where the trace names no operator), or keep it in bfloat16 (lossy) or in host memory "
                      "(offload: copied out in the forward and back in the backward)")
                .arg(QString::fromStdString(layer.path));
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == BackwardColumn && stats.backwardCalls == 0)
        return chain >= 0 && m_document->model->backwardEstimated
                   ? tr("The trace times no backward for this layer: estimated from when the blocks its forward "
                        "saved were freed")
                   : tr("The trace times no backward for this layer");
    if (role == Qt::ToolTipRole && index.column() == CheckpointColumn) {
        if (chain < 0)
            return tr("Only the layers of the checkpointable chain, and the modules inside them, can be toggled");
        const ChainLayer &owner = m_document->model->layers[static_cast<std::size_t>(chain)];
        if (isHeldWhole(row))
            return tr("Recomputed with %1, which is checkpointed whole").arg(QString::fromStdString(owner.path));
        if (m_partIndex[row] >= 0)
            return tr("Checkpoint %1 alone: keep its input, recompute it in the backward pass; the rest of %2 runs "
                      "plainly. Frees %3")
                .arg(QString::fromStdString(layer.path), QString::fromStdString(owner.path),
                     QString::fromStdString(formatBytes(owner.parts[static_cast<std::size_t>(m_partIndex[row])].savingBytes)));
        return tr("Checkpoint %1: keep only its input during the forward pass and recompute it in the backward pass")
            .arg(QString::fromStdString(layer.path));
    }
    if (role == SortRole) {
        switch (index.column()) {
        case NameColumn:
            return static_cast<uint>(row); // module order
        case KindColumn:
            return QString::fromStdString(layer.kind);
        case ActivationColumn:
        case PeakShareColumn:
            return static_cast<qlonglong>(stats.activationBytes);
        case ForwardColumn:
            return static_cast<qlonglong>(stats.forwardNs);
        case BackwardColumn:
            return static_cast<qlonglong>(stats.backwardNs);
        case CheckpointColumn:
            return chain >= 0 ? int(isTicked(row)) : -1;
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case NameColumn:
        return QString::fromStdString(m_flat ? layer.path : std::string(layer.name()));
    case KindColumn:
        return QString::fromStdString(layer.kind);
    case ActivationColumn:
        return QString::fromStdString(formatBytes(stats.activationBytes));
    case PeakShareColumn:
        return QString(QString::number(share, 'f', 1) + QLatin1Char('%'));
    case ForwardColumn: // a container that is never called itself has no time of its own
        return stats.forwardCalls > 0 ? QString(QString::number(milliseconds(stats.forwardNs), 'f', 2)
                                                + (warmUpForward ? tr(" warm-up") : QString()))
                                      : QStringLiteral("—");
    case BackwardColumn:
        if (stats.backwardCalls > 0)
            return QString(QString::number(milliseconds(stats.backwardNs), 'f', 2)
                           + (warmUpBackward ? tr(" warm-up") : QString()));
        if (chain >= 0 && m_document->model->backwardEstimated) // not timed: the cost model's estimate
            return QString(QStringLiteral("≈ ")
                           + QString::number(milliseconds(m_document->model->layers[std::size_t(chain)].backwardNs), 'f', 2));
        return QStringLiteral("—");
    case CheckpointColumn:
        return {};
    }
    return {};
}

QVariant LayerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return tr("Layer");
    case KindColumn:
        return tr("Kind");
    case ActivationColumn:
        return tr("Activations");
    case PeakShareColumn:
        return tr("% of\npeak");
    case ForwardColumn:
        return tr("Forward\nms");
    case BackwardColumn:
        return tr("Backward\nms");
    case CheckpointColumn:
        return tr("Checkpoint");
    case PolicyColumn:
        return tr("Policy");
    }
    return {};
}

Qt::ItemFlags LayerModel::flags(const QModelIndex &index) const
{
    Qt::ItemFlags flags = QAbstractItemModel::flags(index);
    const auto row = static_cast<std::size_t>(index.internalId());
    if (index.isValid() && index.column() == CheckpointColumn && m_chainIndex[row] >= 0) {
        flags |= Qt::ItemIsUserCheckable;
        if (isHeldWhole(row))
            flags &= ~Qt::ItemIsEnabled;
    }
    if (index.isValid() && index.column() == PolicyColumn && m_chainIndex[row] >= 0 && m_partIndex[row] < 0)
        flags |= Qt::ItemIsEditable;
    return flags;
}

bool LayerModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (checkIndex(index, CheckIndexOption::IndexIsValid) && role == Qt::EditRole && index.column() == PolicyColumn)
        return choosePolicy(static_cast<std::size_t>(index.internalId()), value.toInt());
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || role != Qt::CheckStateRole || index.column() != CheckpointColumn)
        return false;
    const auto row = static_cast<std::size_t>(index.internalId());
    const int chain = m_chainIndex[row];
    if (chain < 0 || isHeldWhole(row))
        return false;
    const bool on = value.value<Qt::CheckState>() == Qt::Checked;
    if (isTicked(row) == on)
        return true;
    const auto k = static_cast<std::size_t>(chain);
    const int part = m_partIndex[row];
    if (part < 0) {
        // Whole: its parts are recomputed with it.
        m_checkpoint[k] = on;
        m_parts[k] = 0;
        m_saved[k].clear();
        m_kept[k] = KeptForm::AsMade;
    } else {
        // A module alone: none inside it or around it stays ticked.
        const std::vector<ChainPart> &parts = m_document->model->layers[k].parts;
        const std::string &path = parts[static_cast<std::size_t>(part)].path;
        for (std::size_t c = 0; c < parts.size(); ++c) {
            if (parts[c].path.starts_with(path + ".") || path.starts_with(parts[c].path + "."))
                m_parts[k] &= ~(std::uint64_t(1) << c);
        }
        m_parts[k] = on ? m_parts[k] | std::uint64_t(1) << part : m_parts[k] & ~(std::uint64_t(1) << part);
    }
    showTicks();
    Q_EMIT toggled();
    return true;
}

bool LayerModel::choosePolicy(std::size_t row, int choice)
{
    const int chain = m_chainIndex[row];
    if (chain < 0 || m_partIndex[row] >= 0)
        return false;
    const auto k = static_cast<std::size_t>(chain);
    const std::size_t policies = m_policies[k].size();
    if (choice < 0 || static_cast<std::size_t>(choice) > policies + 2)
        return false;
    // A per-op policy is a way to checkpoint the layer whole: choosing one ticks it. The
    // last two choices keep bfloat16 or offload instead, no checkpoint.
    const auto at = static_cast<std::size_t>(choice);
    m_kept[k] = at == policies + 1 ? KeptForm::Bfloat16 : at == policies + 2 ? KeptForm::Host : KeptForm::AsMade;
    m_checkpoint[k] = m_kept[k] == KeptForm::AsMade;
    m_parts[k] = 0;
    m_saved[k] = at == 0 || at > policies ? std::vector<std::string>() : m_policies[k][at - 1];
    showTicks();
    Q_EMIT toggled();
    return true;
}

} // namespace peaklens::gui
