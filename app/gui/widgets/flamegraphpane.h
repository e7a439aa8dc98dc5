// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The flame graph tab: what is live at the peak or at a clicked time as an icicle, by call
// stack or by module path, searchable; selecting a node shows the memory of the blocks
// under it over the whole trace, drawn on the timeline.

#include "jobs.h"
#include "tracedocument.h"

#include "core/analysis/flamegraph.h"
#include "core/analysis/seriespoint.h"

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
    // The memory of the selected node's blocks over the whole trace, found off the UI thread
    // after selectionChanged (the newest selection wins); an empty curve once it is cleared.
    void selectionMemory(const std::vector<peaklens::SeriesPoint> &curve, const QString &name);

private:
    void rebuild();
    void drawSelection(const std::optional<FlameSelection> &selection, const QString &name);

    DocumentPtr m_document;
    std::optional<std::int64_t> m_timeNs;
    QLabel *m_title;
    QComboBox *m_keying;
    QCheckBox *m_allFrames;
    QLineEdit *m_search;
    QLabel *m_matches;
    FlameGraphView *m_view;
    QScrollArea *m_scroll;
    Jobs m_selectionJobs;
};

} // namespace peaklens::gui
