#pragma once
// The layers of a trace as the module tree (or a flat list of paths), one row each: name,
// kind, activation bytes kept for the backward pass, share of the peak, forward and
// backward time, and a checkbox to toggle checkpointing on the checkpointable chain.

#include "tracedocument.h"

#include <QAbstractItemModel>

#include <vector>

namespace peaklens::gui {

class LayerModel final : public QAbstractItemModel
{
    Q_OBJECT

public:
    enum Columns { NameColumn, KindColumn, ActivationColumn, PeakShareColumn, ForwardColumn, BackwardColumn,
                   CheckpointColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole, LayerRole };

    using QAbstractItemModel::QAbstractItemModel;

    void resetData(const DocumentPtr &document);
    // Flat: every layer at the top level, named by its whole path.
    void setFlat(bool flat);
    bool isFlat() const { return m_flat; }
    // One flag per chain layer of the document's cost model.
    const std::vector<bool> &checkpoint() const { return m_checkpoint; }
    void setCheckpoint(const std::vector<bool> &checkpoint);
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
    void checkpointChanged();

private:
    void rebuildTree();
    const std::vector<std::uint32_t> &childrenOf(const QModelIndex &parent) const;

    DocumentPtr m_document;
    bool m_flat = false;
    std::vector<std::uint32_t> m_topLevel;
    std::vector<std::vector<std::uint32_t>> m_children; // per layer, in module order
    std::vector<int> m_row;                              // per layer: its row under its parent
    std::vector<int> m_chainIndex; // per trace layer: its index in the chain, or -1
    std::vector<bool> m_checkpoint;
    std::int64_t m_peakBytes = 0;
};

} // namespace peaklens::gui
