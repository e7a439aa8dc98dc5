// SPDX-License-Identifier: GPL-3.0-or-later
#include "flamegraphview.h"

#include "core/report/palette.h"
#include "core/trace/units.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QToolTip>

#include <functional>

namespace peaklens::gui {

namespace {

constexpr double kMinWidth = 1.0; // narrower nodes (and everything under them) are not drawn

} // namespace

FlameGraphView::FlameGraphView(QWidget *parent)
    : QWidget(parent)
    , m_rowHeight(fontMetrics().height() + 6)
{
    setObjectName(QStringLiteral("flameGraph"));
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

QSize FlameGraphView::sizeHint() const
{
    const int rows = m_graph ? static_cast<int>(m_graph->maxDepth()) + 1 : 4;
    return {600, rows * m_rowHeight};
}

QSize FlameGraphView::minimumSizeHint() const
{
    return {200, sizeHint().height()};
}

void FlameGraphView::setGraph(std::shared_ptr<const FlameGraph> graph)
{
    m_graph = std::move(graph);
    m_selected.reset();
    m_zoom = 0;
    m_matched.clear();
    m_searching = false;
    updateGeometry();
    layoutNodes();
}

void FlameGraphView::setMatches(const std::vector<std::uint32_t> &nodes)
{
    m_matched.assign(m_graph ? m_graph->nodes.size() : 0, false);
    for (std::uint32_t node : nodes) {
        if (node < m_matched.size())
            m_matched[node] = true;
    }
    update();
}

void FlameGraphView::setSearching(bool searching)
{
    m_searching = searching;
    update();
}

void FlameGraphView::setSelected(std::optional<std::uint32_t> node)
{
    m_selected = node;
    update();
}

void FlameGraphView::zoomInto(std::uint32_t node)
{
    if (!m_graph || node >= m_graph->nodes.size())
        return;
    m_zoom = node;
    layoutNodes();
}

void FlameGraphView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    layoutNodes();
}

void FlameGraphView::layoutNodes()
{
    m_rects.assign(m_graph ? m_graph->nodes.size() : 0, QRectF());
    if (!m_graph || m_graph->nodes.empty()) {
        update();
        return;
    }
    const auto &nodes = m_graph->nodes;
    const double width = this->width();
    const auto rowTop = [this](std::uint32_t depth) { return static_cast<double>(depth) * m_rowHeight; };
    // The zoomed node's ancestors span the width above it.
    for (std::uint32_t n = nodes[m_zoom].parent; n != FlameNode::kNone; n = nodes[n].parent)
        m_rects[n] = QRectF(0, rowTop(nodes[n].depth), width, m_rowHeight - 1);
    const double total = static_cast<double>(std::max<std::int64_t>(nodes[m_zoom].bytes, 1));
    // Preorder: a node's children follow it, each placed after its earlier siblings.
    std::vector<double> nextLeft(nodes.size(), 0.0);
    m_rects[m_zoom] = QRectF(0, rowTop(nodes[m_zoom].depth), width, m_rowHeight - 1);
    nextLeft[m_zoom] = 0;
    for (std::uint32_t n = m_zoom + 1; n < nodes[m_zoom].end; ++n) {
        const std::uint32_t parent = nodes[n].parent;
        if (m_rects[parent].isEmpty()) { // too narrow: so is everything under it
            n = nodes[n].end - 1;
            continue;
        }
        const double w = static_cast<double>(nodes[n].bytes) / total * width;
        const double left = nextLeft[parent];
        nextLeft[parent] += w;
        if (w < kMinWidth) {
            n = nodes[n].end - 1;
            continue;
        }
        m_rects[n] = QRectF(left, rowTop(nodes[n].depth), w, m_rowHeight - 1);
        nextLeft[n] = left;
    }
    update();
}

QColor FlameGraphView::colorOf(const FlameNode &node) const
{
    // Warm for the user's code, cool for libraries and PyTorch, grey for machinery; a hue
    // offset by the label keeps neighbours apart.
    int hue = 30, saturation = 150;
    switch (node.type) {
    case FlameNodeType::Root:
        return palette().mid().color();
    case FlameNodeType::NoStack:
    case FlameNodeType::OnlyHidden:
    case FlameNodeType::NoLayer:
    case FlameNodeType::Synthetic: // memory no event places: no code to colour by
        return palette().midlight().color();
    case FlameNodeType::Layer:
        hue = 200;
        break;
    case FlameNodeType::Frame:
        switch (node.frameKind) {
        case FrameKind::User:
            hue = 25;
            break;
        case FrameKind::Library:
            hue = 170;
            break;
        case FrameKind::Torch:
            hue = 215;
            break;
        default:
            saturation = 20;
            hue = 220;
            break;
        }
        break;
    }
    hue += static_cast<int>(std::hash<std::string>()(node.label) % 24) - 12;
    return QColor::fromHsv((hue + 360) % 360, saturation, 235);
}

void FlameGraphView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (!m_graph || m_graph->nodes.empty() || m_graph->nodes.front().bytes == 0) {
        painter.setPen(palette().placeholderText().color());
        painter.drawText(rect(), Qt::AlignCenter, tr("Nothing is live here."));
        return;
    }
    const QFontMetrics metrics = fontMetrics();
    for (std::uint32_t n = 0; n < m_rects.size(); ++n) {
        const QRectF &box = m_rects[n];
        if (box.isEmpty())
            continue;
        const FlameNode &node = m_graph->nodes[n];
        QColor fill = colorOf(node);
        const bool matched = n < m_matched.size() && m_matched[n];
        if (m_searching && !matched)
            fill = fill.lighter(125);
        painter.fillRect(box, fill);
        if (matched) {
            painter.setPen(QPen(QColor(static_cast<QRgb>(palette::kHighlight)), 2));
            painter.drawRect(box.adjusted(1, 1, -1, -1));
        }
        if (m_selected && *m_selected == n) {
            painter.setPen(QPen(palette().text().color(), 2));
            painter.drawRect(box.adjusted(1, 1, -1, -1));
        }
        if (box.width() > 24) {
            const QString text =
                QString::fromStdString(node.label) + QStringLiteral("  ") + QString::fromStdString(formatBytes(node.bytes));
            painter.setPen(m_searching && !matched ? palette().placeholderText().color() : QColor(Qt::black));
            painter.drawText(box.adjusted(4, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                             metrics.elidedText(text, Qt::ElideRight, static_cast<int>(box.width()) - 6));
        }
    }
}

std::optional<std::uint32_t> FlameGraphView::nodeAt(const QPoint &position) const
{
    for (std::uint32_t n = 0; n < m_rects.size(); ++n) {
        if (!m_rects[n].isEmpty() && m_rects[n].contains(position))
            return n;
    }
    return std::nullopt;
}

QRectF FlameGraphView::nodeRect(std::uint32_t node) const
{
    return node < m_rects.size() ? m_rects[node] : QRectF();
}

QString FlameGraphView::tooltipOf(std::uint32_t n) const
{
    const FlameNode &node = m_graph->nodes[n];
    const double share =
        100.0 * static_cast<double>(node.bytes) / static_cast<double>(std::max<std::int64_t>(m_graph->nodes.front().bytes, 1));
    QString text = QString::fromStdString(node.detail.empty() ? node.label : node.detail);
    if (node.type == FlameNodeType::Frame)
        text += tr("\n%1 code").arg(QString::fromUtf8(frameKindName(node.frameKind)));
    text += tr("\n%1 in %2 blocks, %3 % of what is live")
                .arg(QString::fromStdString(formatBytes(node.bytes)))
                .arg(node.blocks)
                .arg(share, 0, 'f', 1);
    if (node.selfBytes > 0 && node.selfBytes != node.bytes)
        text += tr("\n%1 allocated here directly").arg(QString::fromStdString(formatBytes(node.selfBytes)));
    return text + tr("\nClick to show these blocks on the timeline; double-click to zoom in.");
}

bool FlameGraphView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        if (const auto node = nodeAt(help->pos()))
            QToolTip::showText(help->globalPos(), tooltipOf(*node), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void FlameGraphView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton)
        return;
    const auto node = nodeAt(event->pos());
    setSelected(node);
    Q_EMIT nodeClicked(node);
}

void FlameGraphView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (const auto node = nodeAt(event->pos()))
        zoomInto(*node == m_zoom && m_graph->nodes[*node].parent != FlameNode::kNone ? m_graph->nodes[*node].parent : *node);
}

void FlameGraphView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Escape && m_zoom != 0) {
        zoomInto(0);
        return;
    }
    QWidget::keyPressEvent(event);
}

} // namespace peaklens::gui
