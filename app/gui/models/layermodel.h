// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The layers of a trace as the module tree (or a flat list of paths), one row each: name,
// kind, activation bytes kept for the backward pass, share of the peak, forward and
// backward time, and a checkbox to toggle checkpointing on the checkpointable chain: on
// a chain layer (checkpointed whole) or on a module inside one (checkpointed alone). A
// chain layer's policy says what its checkpoint recomputes: everything, or all but the
// outputs of the operators a per-op policy saves (chosen among its leading policies,
// core/plan/operatoroutputs.h); or that it is no checkpoint and keeps bfloat16.

#include "tracedocument.h"

#include "core/plan/checkpointschedule.h"

#include <QAbstractItemModel>

#include <vector>

namespace peaklens::gui {

class LayerModel final : public QAbstractItemModel
{
    Q_OBJECT

public:
    // The checkbox first: toggling checkpoints is what the table is for. The view draws the
    // tree in the name column (QTreeView::setTreePosition).
    enum Columns {
        CheckpointColumn,
        PolicyColumn,
        NameColumn,
        KindColumn,
        ActivationColumn,
        PeakShareColumn,
        ForwardColumn,
        BackwardColumn,
        NumColumns
    };
    // PolicyChoicesRole: a chain layer's policies as the policy column offers them (a
    // QStringList, "Recompute all" first); the column's EditRole is the chosen one's index.
    enum Roles { SortRole = Qt::UserRole, LayerRole, PolicyChoicesRole };

    using QAbstractItemModel::QAbstractItemModel;

    void resetData(const DocumentPtr &document);
    // Flat: every layer at the top level, named by its whole path.
    void setFlat(bool flat);
    bool isFlat() const { return m_flat; }
    // One flag per chain layer of the document's cost model: checkpointed whole.
    const std::vector<bool> &checkpoint() const { return m_checkpoint; }
    // The ticks as units: a single-layer unit per ticked layer, a part unit per ticked module.
    CheckpointSchedule schedule() const;
    // Ticks the layers a schedule's top-level units hold and the parts it checkpoints (the
    // views repaint; toggled() is for the user's ticks alone).
    void setSchedule(const CheckpointSchedule &schedule);
    // The index (first column) of a trace layer; invalid for none.
    QModelIndex indexOfLayer(std::uint32_t layer, int column = NameColumn) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

Q_SIGNALS:
    // The user ticked or unticked a box (setData).
    void toggled();

private:
    void rebuildTree();
    const std::vector<std::uint32_t> &childrenOf(const QModelIndex &parent) const;

    DocumentPtr m_document;
    bool m_flat = false;
    std::vector<std::uint32_t> m_topLevel;
    std::vector<std::vector<std::uint32_t>> m_children; // per layer, in module order
    std::vector<int> m_row;                             // per layer: its row under its parent
    // Per trace layer: its chain layer's index (a chain layer, or a part of one), or -1, and
    // its index among that layer's parts, or -1 for the chain layer itself.
    std::vector<int> m_chainIndex, m_partIndex;
    std::vector<bool> m_checkpoint;
    std::vector<std::uint64_t> m_parts; // per chain layer: its ticked parts
    // Per chain layer: its leading per-op policies, and the one chosen (empty: none).
    std::vector<std::vector<std::vector<std::string>>> m_policies;
    std::vector<std::vector<std::string>> m_saved;
    std::vector<KeptForm> m_kept; // per chain layer: run plainly, keeping in bfloat16 or host memory
    int policyChoice(std::size_t chain) const;
    // 0: recompute all, i: m_policies[chain][i - 1], the two after them: keep bfloat16, offload.
    bool choosePolicy(std::size_t row, int choice);
    bool isTicked(std::size_t row) const;
    bool isHeldWhole(std::size_t row) const; // a part of a layer ticked whole
    void showTicks();
    std::int64_t m_peakBytes = 0;
};

} // namespace peaklens::gui
