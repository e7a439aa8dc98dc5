// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The layers with their checkpoint toggles: a tree (or flat list) over the LayerModel,
// sortable by any column, with a filter that keeps a match's enclosing modules. Says which
// layer the user selected and where a layer's menu was asked for.

#include <QWidget>

#include <cstdint>
#include <optional>

class QLineEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace peaklens::gui {

class LayerModel;

class LayersPane final : public QWidget
{
    Q_OBJECT

public:
    explicit LayersPane(LayerModel *layers, QWidget *parent = nullptr);

    // After the model was reset: every module open, names in full (the tree scrolls
    // sideways when they are long), the other columns fitted.
    void fitColumns();
    void setFlat(bool flat);
    void focusFilter();
    void selectLayer(std::uint32_t layer);

Q_SIGNALS:
    // A layer the user selected, not the current row the view takes when it gains focus;
    // none when the selection is cleared.
    void layerSelected(std::optional<std::uint32_t> layer);
    void menuRequested(std::uint32_t layer, const QPoint &globalPosition);

private:
    LayerModel *m_layers;
    QSortFilterProxyModel *m_proxy;
    QTreeView *m_view;
    QLineEdit *m_filter;
};

} // namespace peaklens::gui
