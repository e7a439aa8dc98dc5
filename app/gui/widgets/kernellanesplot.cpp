// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernellanesplot.h"

#include "core/report/palette.h"
#include "core/trace/units.h"

#include <QObject>

#include <cmath>

namespace peaklens::gui {

namespace {

constexpr std::size_t kMaxLanes = 12;
constexpr int kRowPixels = 18;
constexpr double kBarHeight = 0.8;

} // namespace

KernelLanesPlot::KernelLanesPlot(QCustomPlot *plot, QCPAxisRect *memory, int row)
    : m_plot(plot)
    , m_memory(memory)
    , m_rect(new QCPAxisRect(plot))
    , m_margins(new QCPMarginGroup(plot))
    , m_row(row)
{
    m_rect->setRangeDrag(Qt::Horizontal);
    m_rect->setRangeZoom(Qt::Horizontal);
    m_rect->setRangeDragAxes(m_memory->axis(QCPAxis::atBottom), nullptr);
    m_rect->setRangeZoomAxes(m_memory->axis(QCPAxis::atBottom), nullptr);
    QCPAxis *x = m_rect->axis(QCPAxis::atBottom);
    QCPAxis *y = m_rect->axis(QCPAxis::atLeft);
    x->setTickLabels(false);
    x->setTicks(false);
    y->setTicks(false);
    y->setRangeReversed(true); // the first stream on top
    const QPalette palette = plot->palette();
    for (QCPAxis *axis : {x, y}) {
        axis->setBasePen(QPen(palette.mid().color()));
        axis->setTickLabelColor(palette.text().color());
        axis->grid()->setVisible(false);
    }
    y->setTickLabels(true);
    QObject::connect(m_memory->axis(QCPAxis::atBottom), qOverload<const QCPRange &>(&QCPAxis::rangeChanged), x,
                     qOverload<const QCPRange &>(&QCPAxis::setRange));
    m_memory->setMarginGroup(QCP::msLeft | QCP::msRight, m_margins);
    m_rect->setMarginGroup(QCP::msLeft | QCP::msRight, m_margins);
}

void KernelLanesPlot::show(bool shown)
{
    if (shown == m_shown)
        return;
    m_shown = shown;
    if (shown) {
        m_plot->plotLayout()->insertRow(m_row);
        m_plot->plotLayout()->addElement(m_row, 0, m_rect);
    } else {
        m_plot->plotLayout()->take(m_rect);
        m_plot->plotLayout()->simplify();
    }
}

void KernelLanesPlot::setDocument(const DocumentPtr &document, std::int64_t originNs)
{
    m_document = document;
    m_originNs = originNs;
    for (QCPGraph *graph : m_bases)
        m_plot->removeGraph(graph);
    for (QCPGraph *graph : m_fills)
        m_plot->removeGraph(graph);
    graphsCleared();
    m_lanes.clear();
    m_busy.clear();
    const KernelLanes *kernels = document ? document->kernels.get() : nullptr;
    show(kernels && !kernels->empty());
    if (!m_shown)
        return;
    // The busiest streams when there are too many to tell apart.
    for (std::size_t lane = 0; lane < kernels->size(); ++lane)
        m_lanes.push_back(lane);
    std::stable_sort(m_lanes.begin(), m_lanes.end(),
                     [&](std::size_t a, std::size_t b) { return kernels->kernelCount(a) > kernels->kernelCount(b); });
    m_lanes.resize(std::min(m_lanes.size(), kMaxLanes));
    std::sort(m_lanes.begin(), m_lanes.end());

    QCPAxis *x = m_rect->axis(QCPAxis::atBottom);
    QCPAxis *y = m_rect->axis(QCPAxis::atLeft);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QColor fill(static_cast<QRgb>(palette::kKernel));
    for (std::size_t row = 0; row < m_lanes.size(); ++row) {
        ticker->addTick(static_cast<double>(row) + 0.5, QObject::tr("stream %1").arg(kernels->stream(m_lanes[row])));
        QCPGraph *base = m_plot->addGraph(x, y);
        base->setPen(Qt::NoPen);
        base->removeFromLegend();
        base->setLineStyle(QCPGraph::lsStepLeft);
        QCPGraph *bar = m_plot->addGraph(x, y);
        bar->setPen(QPen(fill, 0));
        bar->setBrush(fill);
        bar->setLineStyle(QCPGraph::lsStepLeft);
        bar->setChannelFillGraph(base);
        bar->removeFromLegend();
        m_bases.push_back(base);
        m_fills.push_back(bar);
    }
    y->setTicker(ticker);
    y->setTicks(true);
    y->setSubTicks(false);
    y->setTickLength(0);
    y->setRange(0, static_cast<double>(m_lanes.size()));
    const int height = kRowPixels * static_cast<int>(m_lanes.size()) + 6;
    m_rect->setMinimumSize(0, height);
    m_rect->setMaximumSize(QWIDGETSIZE_MAX, height);
    x->setRange(m_memory->axis(QCPAxis::atBottom)->range());
}

void KernelLanesPlot::graphsCleared()
{
    m_bases.clear();
    m_fills.clear();
}

void KernelLanesPlot::refresh(std::int64_t beginNs, std::int64_t endNs, int columns)
{
    if (!m_shown)
        return;
    m_beginNs = beginNs;
    m_endNs = std::max(endNs, beginNs + 1);
    m_busy.assign(m_lanes.size(), {});
    const double width = static_cast<double>(m_endNs - m_beginNs) / columns;
    for (std::size_t row = 0; row < m_lanes.size(); ++row) {
        m_busy[row] = m_document->kernels->busy(m_lanes[row], m_beginNs, m_endNs, columns);
        QVector<double> keys, floor, top;
        const double bottom = static_cast<double>(row) + 0.5 + kBarHeight / 2;
        for (int c = 0; c <= columns; ++c) {
            const double share = c < columns ? m_busy[row][static_cast<std::size_t>(c)] : 0.0;
            keys << static_cast<double>(m_beginNs - m_originNs + static_cast<std::int64_t>(c * width)) / 1e6;
            floor << bottom;
            top << bottom - kBarHeight * share; // the axis is reversed: up is smaller
        }
        m_bases[row]->setData(keys, floor, true);
        m_fills[row]->setData(keys, top, true);
    }
}

std::optional<std::size_t> KernelLanesPlot::laneAt(const QPoint &position) const
{
    if (!m_shown || !m_rect->rect().contains(position))
        return std::nullopt;
    const double row = m_rect->axis(QCPAxis::atLeft)->pixelToCoord(position.y());
    if (row < 0 || row >= static_cast<double>(m_lanes.size()))
        return std::nullopt;
    return static_cast<std::size_t>(row);
}

QString KernelLanesPlot::hoverText(const QPoint &position) const
{
    const auto row = laneAt(position);
    if (!row)
        return {};
    const KernelLanes &kernels = *m_document->kernels;
    const double x = m_rect->axis(QCPAxis::atBottom)->pixelToCoord(position.x());
    const std::int64_t timeNs = m_originNs + static_cast<std::int64_t>(std::llround(x * 1e6));
    const QString stream = QObject::tr("stream %1").arg(kernels.stream(m_lanes[*row]));
    if (const auto kernel = kernels.kernelAt(m_lanes[*row], timeNs)) {
        const Trace &trace = *m_document->trace;
        const Kernel &k = trace.kernels[*kernel];
        return QObject::tr("%1\n%2, %3 from %4 ms")
            .arg(QString::fromStdString(trace.kernelNames[k.name]), stream,
                 QString::fromStdString(formatDuration(k.endNs - k.beginNs)))
            .arg(static_cast<double>(k.beginNs - m_originNs) / 1e6, 0, 'f', 3);
    }
    const auto &busy = m_busy[*row];
    const auto column = static_cast<std::size_t>(
        std::clamp((static_cast<double>(timeNs - m_beginNs) / static_cast<double>(m_endNs - m_beginNs)) * busy.size(), 0.0,
                   static_cast<double>(busy.size()) - 1));
    return QObject::tr("%1 idle here; kernels ran %2 % of this pixel's time")
        .arg(stream)
        .arg(busy.empty() ? 0.0 : busy[column] * 100.0, 0, 'f', 0);
}

} // namespace peaklens::gui
