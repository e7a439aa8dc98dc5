// SPDX-License-Identifier: GPL-3.0-or-later
#include "layerspane.h"

#include "models/layermodel.h"

#include <algorithm>

#include <QComboBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTreeView>
#include <QVBoxLayout>

namespace peaklens::gui {

namespace {

// The policy column's editor: a drop-down of the layer's policies, applied as one is picked.
class PolicyDelegate final : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget *createEditor(QWidget *parent, const QStyleOptionViewItem &, const QModelIndex &index) const override
    {
        auto *box = new QComboBox(parent);
        box->addItems(index.data(LayerModel::PolicyChoicesRole).toStringList());
        box->setCurrentIndex(index.data(Qt::EditRole).toInt());
        connect(box, &QComboBox::activated, this, [this, box] {
            auto *self = const_cast<PolicyDelegate *>(this);
            Q_EMIT self->commitData(box);
            Q_EMIT self->closeEditor(box);
        });
        return box;
    }
    void setEditorData(QWidget *, const QModelIndex &) const override { }
    void setModelData(QWidget *editor, QAbstractItemModel *model, const QModelIndex &index) const override
    {
        model->setData(index, static_cast<QComboBox *>(editor)->currentIndex(), Qt::EditRole);
    }
};

} // namespace

LayersPane::LayersPane(LayerModel *layers, QWidget *parent)
    : QWidget(parent)
    , m_layers(layers)
    , m_proxy(new QSortFilterProxyModel(this))
    , m_view(new QTreeView(this))
    , m_filter(new QLineEdit(this))
{
    m_proxy->setSourceModel(layers);
    m_proxy->setSortRole(LayerModel::SortRole);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setFilterKeyColumn(LayerModel::NameColumn);
    m_proxy->setRecursiveFilteringEnabled(true); // a match keeps its enclosing modules
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->setAlternatingRowColors(true);
    m_view->setUniformRowHeights(true);
    m_view->header()->setStretchLastSection(false);
    m_view->sortByColumn(LayerModel::NameColumn, Qt::AscendingOrder);
    m_view->setTreePosition(LayerModel::NameColumn); // the checkbox column comes first
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setItemDelegateForColumn(LayerModel::PolicyColumn, new PolicyDelegate(m_view));
    m_view->setEditTriggers(QAbstractItemView::SelectedClicked | QAbstractItemView::DoubleClicked
                            | QAbstractItemView::EditKeyPressed);
    m_filter->setPlaceholderText(tr("Filter layers (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_filter);
    layout->addWidget(m_view);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint &position) {
        const QVariant layer = m_proxy->data(m_view->indexAt(position), LayerModel::LayerRole);
        if (layer.isValid())
            Q_EMIT menuRequested(layer.toUInt(), m_view->viewport()->mapToGlobal(position));
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_view->selectionModel()->selectedRows();
        const QVariant layer = rows.isEmpty() ? QVariant() : m_proxy->data(rows.front(), LayerModel::LayerRole);
        Q_EMIT layerSelected(layer.isValid() ? std::optional<std::uint32_t>(layer.toUInt()) : std::nullopt);
    });
}

void LayersPane::fitColumns()
{
    m_view->expandAll();
    for (int column = 0; column < LayerModel::NumColumns; ++column)
        m_view->resizeColumnToContents(column);
    // Policies are chosen after the table fills: room for a short one ("Save addmm +2").
    m_view->setColumnWidth(LayerModel::PolicyColumn, std::max(m_view->columnWidth(LayerModel::PolicyColumn),
                                                              m_view->fontMetrics().horizontalAdvance(tr("Save addmm +2")) + 24));
    // A long name takes at most two fifths of the pane: the figures stay in sight.
    m_view->setColumnWidth(LayerModel::NameColumn,
                           std::min(m_view->columnWidth(LayerModel::NameColumn), m_view->width() * 2 / 5));
}

void LayersPane::setFlat(bool flat)
{
    m_layers->setFlat(flat);
    m_view->setRootIsDecorated(!flat);
    m_view->expandAll();
}

void LayersPane::focusFilter()
{
    m_filter->setFocus();
}

void LayersPane::selectLayer(std::uint32_t layer)
{
    m_view->setCurrentIndex(m_proxy->mapFromSource(m_layers->indexOfLayer(layer)));
}

} // namespace peaklens::gui
