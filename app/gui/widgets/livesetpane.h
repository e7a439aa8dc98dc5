// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What is live at the peak or a clicked time: the live set grouped by layer, category,
// allocation site, source file or the frames a pattern matches, and under it the selected
// site's call stack, its user code first and every frame (allocator, dispatcher,
// interpreter) one click away.

#include "tracedocument.h"

#include "core/analysis/blockgroups.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;

namespace peaklens::gui {

class LiveSetModel;

class LiveSetPane final : public QWidget
{
    Q_OBJECT

public:
    explicit LiveSetPane(QWidget *parent = nullptr);

    // What is live on the document's device at timeNs, or at the peak when none.
    void showLiveSet(const DocumentPtr &document, std::optional<std::int64_t> timeNs);
    LiveSetModel *model() const { return m_model; }
    // By layer for a trace that names layers, else by category.
    void setDefaultGrouping(bool hasLayers);
    // By source file or by the frames a pattern matches, as peaklens-cli summary --group.
    void setGrouping(const BlockGrouping &grouping);

private:
    void showStack(const QModelIndex &current);

    DocumentPtr m_document;
    std::optional<std::int64_t> m_timeNs;
    LiveSetModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QComboBox *m_grouping;
    QLineEdit *m_pattern; // shown while grouping by a pattern
    QLabel *m_title;
    QPlainTextEdit *m_stack;
    QCheckBox *m_allFrames;
};

} // namespace peaklens::gui
