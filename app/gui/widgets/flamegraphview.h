// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An icicle of live memory: the root (all live bytes) on top, each frame or module under
// its caller or parent, as wide as the bytes under it. Search matches are outlined and the
// rest dimmed; a click selects a node, a double-click zooms into it (its ancestors stay as
// full-width rows above), Escape or a double-click on the root zooms out.

#include "core/analysis/flamegraph.h"

#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

namespace peaklens::gui {

class FlameGraphView final : public QWidget
{
    Q_OBJECT

public:
    explicit FlameGraphView(QWidget *parent = nullptr);

    void setGraph(std::shared_ptr<const FlameGraph> graph);
    const FlameGraph *graph() const { return m_graph.get(); }
    // The search's matches, outlined; while searching the rest is dimmed.
    void setMatches(const std::vector<std::uint32_t> &nodes);
    void setSearching(bool searching);
    void setSelected(std::optional<std::uint32_t> node);
    std::optional<std::uint32_t> selected() const { return m_selected; }
    void zoomInto(std::uint32_t node);
    std::uint32_t zoomRoot() const { return m_zoom; }
    // The node drawn at a point, if any.
    std::optional<std::uint32_t> nodeAt(const QPoint &position) const;
    // Where a node is drawn (empty when too narrow to draw).
    QRectF nodeRect(std::uint32_t node) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void nodeClicked(std::optional<std::uint32_t> node);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    bool event(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void layoutNodes();
    QColor colorOf(const FlameNode &node) const;
    QString tooltipOf(std::uint32_t node) const;

    std::shared_ptr<const FlameGraph> m_graph;
    std::vector<bool> m_matched;
    bool m_searching = false;
    std::optional<std::uint32_t> m_selected;
    std::uint32_t m_zoom = 0;
    std::vector<QRectF> m_rects; // per node, empty when not drawn
    int m_rowHeight;
};

} // namespace peaklens::gui
