// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The flame graph tab: what is live at the peak or at a clicked time as an icicle, by call
// stack or by module path, searchable; selecting a node shows the memory of the blocks
// under it on the timeline.

#include "tracedocument.h"

#include "core/analysis/flamegraph.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QScrollArea;

namespace peaklens::gui {

class FlameGraphView;

class FlameGraphPane final : public QWidget
{
    Q_OBJECT

public:
    explicit FlameGraphPane(QWidget *parent = nullptr);

    // Live memory on the document's device at timeNs, or at the peak when none.
    void showAt(const DocumentPtr &document, std::optional<std::int64_t> timeNs);
    FlameGraphView *view() const { return m_view; }
    void setKeying(FlameKeying keying);
    void search(const QString &text);
    QString searchSummary() const;
    // Selects a node as a click does.
    void selectNode(std::optional<std::uint32_t> node);

Q_SIGNALS:
    // The blocks under the selected node, with a name for them; none clears the selection.
    void selectionChanged(const std::optional<FlameSelection> &selection, const QString &name);

private:
    void rebuild();

    DocumentPtr m_document;
    std::optional<std::int64_t> m_timeNs;
    QLabel *m_title;
    QComboBox *m_keying;
    QCheckBox *m_allFrames;
    QLineEdit *m_search;
    QLabel *m_matches;
    FlameGraphView *m_view;
    QScrollArea *m_scroll;
};

} // namespace peaklens::gui
