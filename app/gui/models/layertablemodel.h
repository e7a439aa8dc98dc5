#pragma once
// The layers of a trace, one row each: module path, kind, activation bytes kept for the
// backward pass, share of the peak, forward and backward time, and a checkbox to toggle
// checkpointing on the layers of the checkpointable chain.

#include "tracedocument.h"

#include <QAbstractTableModel>

#include <vector>

namespace peaklens::gui {

class LayerTableModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { NameColumn, KindColumn, ActivationColumn, PeakShareColumn, ForwardColumn, BackwardColumn,
                   CheckpointColumn, NumColumns };
    enum Roles { SortRole = Qt::UserRole, LayerRole };

    using QAbstractTableModel::QAbstractTableModel;

    void resetData(const DocumentPtr &document);
    // One flag per chain layer of the document's cost model.
    const std::vector<bool> &checkpoint() const { return m_checkpoint; }
    void setCheckpoint(const std::vector<bool> &checkpoint);
    // The row of a trace layer, or -1.
    int rowOfLayer(std::uint32_t layer) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

Q_SIGNALS:
    void checkpointChanged();

private:
    DocumentPtr m_document;
    std::vector<int> m_chainIndex; // per trace layer: its index in the chain, or -1
    std::vector<bool> m_checkpoint;
    std::int64_t m_peakBytes = 0;
};

} // namespace peaklens::gui
