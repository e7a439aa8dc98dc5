// SPDX-License-Identifier: GPL-3.0-or-later
#include "timelineview.h"

#include "chartstyle.h"
#include "momenttext.h"

#include "core/analysis/blockindex.h"

#include "core/analysis/levelofdetail.h"
#include "core/analysis/phasespans.h"
#include "core/report/palette.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace peaklens::gui {

namespace {

constexpr std::size_t kMaxStackedGroups = 10;
} // namespace

TimelineView::TimelineView(QWidget *parent)
    : QCustomPlot(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    xAxis->setLabel(tr("time (ms)"));
    xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new NiceTicker));
    yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new NiceTicker));
    placeLegendBelow(this);
    m_kernelLanes = std::make_unique<KernelLanesPlot>(this, axisRect(), 1);
    setSelectionRectMode(QCP::srmNone);
    // Thousands of columns of translucent fills: antialiasing them costs more than it shows.
    setNotAntialiasedElements(QCP::aeFills | QCP::aePlottables);
    setPlottingHint(QCP::phFastPolylines, true);
    const QPalette pal = palette();
    setBackground(pal.base());
    for (QCPAxis *axis : {xAxis, yAxis}) {
        axis->setBasePen(QPen(pal.text().color()));
        axis->setTickPen(QPen(pal.text().color()));
        axis->setSubTickPen(QPen(pal.text().color()));
        axis->setTickLabelColor(pal.text().color());
        axis->setLabelColor(pal.text().color());
        axis->grid()->setPen(QPen(pal.mid().color(), 0, Qt::DotLine));
    }
    legend->setBrush(pal.base());
    legend->setTextColor(pal.text().color());
    legend->setBorderPen(QPen(pal.mid().color()));
    connect(xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this, &TimelineView::onRangeChanged);
    // The plot's width is known only once it is laid out; recompute when it changed.
    connect(this, &QCustomPlot::afterLayout, this, [this] {
        if (axisRect()->width() != m_columns)
            QMetaObject::invokeMethod(this, &TimelineView::refreshColumns, Qt::QueuedConnection);
    });
    connect(selectionRect(), &QCPSelectionRect::accepted, this, [this](const QRect &rect, QMouseEvent *) {
        const std::int64_t a = toNs(xAxis->pixelToCoord(rect.left())), b = toNs(xAxis->pixelToCoord(rect.right()));
        setSelectionRectMode(QCP::srmNone);
        if (b > a)
            Q_EMIT rangeSelected(a, b);
    });
}

const TimelineSeries &TimelineView::series() const
{
    return m_document->timeline(m_grouping);
}

double TimelineView::toX(std::int64_t ns) const
{
    return static_cast<double>(ns - m_originNs) / 1e6;
}

std::int64_t TimelineView::toNs(double x) const
{
    return m_originNs + static_cast<std::int64_t>(std::llround(x * 1e6));
}

void TimelineView::setDocument(const DocumentPtr &document)
{
    m_document = document;
    m_overview = {};
    m_originNs = document ? document->originNs() : 0;
    m_prediction.clear();
    m_comparison.clear();
    m_largestFreeCurve.clear();
    m_comparisonName.clear();
    m_layerCurve.clear();
    m_layerName.clear();
    m_markedTime.reset();
    m_highlightedLayer.reset();
    m_pinnedBlock.reset();
    rebuildGraphs();
    rebuildItems();
    resetZoom();
}

void TimelineView::showOverview(const std::vector<SeriesPoint> &high, const std::vector<SeriesPoint> &low, const QString &name)
{
    if (high.empty() || low.size() != high.size())
        return;
    m_overview = {high, low, name};
    rebuildGraphs(); // with a document, the band behind it; without, the band alone
    if (m_document) {
        refreshColumns();
        return;
    }
    m_originNs = high.front().timeNs;
    setValueAxis(std::max_element(high.begin(), high.end(), [](auto &a, auto &b) { return a.bytes < b.bytes; })->bytes);
    addOverviewBand();
    xAxis->setRange(0, std::max(toX(high.back().timeNs), 1e-3) * 1.01);
    replot();
}

void TimelineView::addOverviewBand()
{
    if (m_overview.high.empty())
        return;
    QCPGraph *lowest = addGraph();
    QCPGraph *highest = addGraph();
    styleBand(lowest, highest, palette(), m_overview.name);
    showCurve(lowest, m_overview.low);
    showCurve(highest, m_overview.high);
    lowest->removeFromLegend();
}

void TimelineView::setValueAxis(std::int64_t top)
{
    const auto [unit, unitName] = byteUnit(top);
    m_unitBytes = unit;
    yAxis->setLabel(tr("memory (%1)").arg(unitName));
    // Headroom for the peak's label.
    yAxis->setRange(0, std::max(1.0, static_cast<double>(top) / unit * 1.15));
}

void TimelineView::growDocument(const DocumentPtr &document)
{
    if (!m_document) {
        setDocument(document);
        return;
    }
    const QCPRange shown = xAxis->range();
    const bool whole = qFuzzyCompare(shown.lower + 1, m_wholeRange.lower + 1) && qFuzzyCompare(shown.upper, m_wholeRange.upper);
    m_document = document;
    m_pinnedBlock.reset(); // an index into the old document's blocks
    rebuildGraphs();
    rebuildItems();
    highlightLayer(m_highlightedLayer);
    if (whole) {
        resetZoom();
    } else {
        xAxis->setRange(shown);
        refreshColumns();
    }
}

void TimelineView::setGrouping(GroupBy grouping)
{
    m_grouping = grouping;
    rebuildGraphs();
    refreshColumns();
}

void TimelineView::showCurve(QCPGraph *graph, const std::vector<SeriesPoint> &curve)
{
    if (!graph)
        return;
    QVector<double> keys, values;
    for (const SeriesPoint &point : curve) {
        keys << toX(point.timeNs);
        values << static_cast<double>(point.bytes) / m_unitBytes;
    }
    graph->setData(keys, values, true);
    graph->setVisible(!curve.empty());
    graph->removeFromLegend();
    if (!curve.empty())
        graph->addToLegend();
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::setPrediction(const std::vector<SeriesPoint> &curve)
{
    m_prediction = curve;
    showCurve(m_predicted, curve);
    markCurvePeaks();
}

void TimelineView::setLargestFree(const std::vector<SeriesPoint> &curve)
{
    m_largestFreeCurve = curve;
    showCurve(m_largestFree, curve);
}

void TimelineView::setComparison(const std::vector<SeriesPoint> &curve, const QString &name)
{
    m_comparison = curve;
    m_comparisonName = name;
    if (m_measured)
        m_measured->setName(name);
    showCurve(m_measured, curve);
    markCurvePeaks();
}

void TimelineView::markCurvePeaks()
{
    for (QCPAbstractItem *item : m_curvePeakItems)
        removeItem(item);
    m_curvePeakItems.clear();
    if (!m_document)
        return;
    // The predicted peak's label to the left of its marker, the measured one's to the right:
    // the two peaks are often close.
    const auto mark = [this](const std::vector<SeriesPoint> &curve, palette::Rgb colour, QCPItemTracer::TracerStyle style,
                             const QString &what, bool left) {
        const auto peak = std::max_element(curve.begin(), curve.end(),
                                           [](const SeriesPoint &a, const SeriesPoint &b) { return a.bytes < b.bytes; });
        if (peak == curve.end())
            return;
        auto *tracer = new QCPItemTracer(this);
        tracer->position->setCoords(toX(peak->timeNs), static_cast<double>(peak->bytes) / m_unitBytes);
        tracer->setStyle(style);
        tracer->setSize(8);
        tracer->setPen(QPen(paletteColor(colour), 2));
        auto *label = new QCPItemText(this);
        label->position->setParentAnchor(tracer->position);
        label->position->setCoords(left ? -6 : 6, 4);
        label->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        label->setText(what.arg(QString::fromStdString(formatBytes(peak->bytes))));
        label->setColor(paletteColor(colour));
        // Readable over the bands it lies on.
        QColor backing = palette().base().color();
        backing.setAlpha(200);
        label->setBrush(backing);
        m_curvePeakItems.push_back(tracer);
        m_curvePeakItems.push_back(label);
    };
    mark(m_prediction, palette::kPredicted, QCPItemTracer::tsPlus, tr("predicted peak %1"), true);
    mark(m_comparison, palette::kMeasured, QCPItemTracer::tsSquare, tr("measured peak %1"), false);
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::showMeasurement(std::int64_t beginNs, std::int64_t endNs, const QString &text)
{
    clearMeasurement();
    auto *rect = new QCPItemRect(this);
    rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->topLeft->setCoords(toX(beginNs), 0);
    rect->bottomRight->setCoords(toX(endNs), 1);
    rect->setPen(QPen(palette().highlight().color(), 1));
    QColor fill = palette().highlight().color();
    fill.setAlpha(40);
    rect->setBrush(fill);
    auto *label = new QCPItemText(this);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(toX(beginNs), 0.06);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(text);
    label->setPadding(QMargins(4, 2, 4, 2));
    label->setBrush(palette().base());
    label->setPen(QPen(palette().highlight().color()));
    label->setColor(palette().text().color());
    m_measurementItems = {rect, label};
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::clearMeasurement()
{
    for (QCPAbstractItem *item : m_measurementItems)
        removeItem(item);
    m_measurementItems.clear();
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::setMarkedTime(std::optional<std::int64_t> timeNs)
{
    m_markedTime = timeNs;
    if (m_marker) {
        m_marker->setVisible(timeNs.has_value());
        if (timeNs) {
            m_marker->point1->setCoords(toX(*timeNs), 0);
            m_marker->point2->setCoords(toX(*timeNs), 1);
        }
    }
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::highlightLayer(std::optional<std::uint32_t> layer)
{
    m_highlightedLayer = layer;
    m_layerCurve.clear();
    if (m_document && layer) {
        const Trace &trace = *m_document->trace;
        for (const SeriesPoint &point : layerMemory(trace, m_document->device, *layer))
            m_layerCurve.push_back({point.timeNs, point.bytes});
        m_layerName = tr("memory of %1").arg(legendLayerName(QString::fromStdString(trace.layers[*layer].path)));
        if (m_layerGraph)
            m_layerGraph->setName(m_layerName);
    }
    showCurve(m_layerGraph, m_layerCurve);
    refreshColumns();
}

std::optional<std::int64_t> TimelineView::deviceCapacity() const
{
    if (!m_document)
        return std::nullopt;
    const auto bytes = parseBytes(m_document->trace->metaValue(metakey::DeviceMemory));
    return bytes && *bytes > 0 ? bytes : std::nullopt;
}

void TimelineView::resetZoom()
{
    if (!m_document)
        return;
    const auto &allocated = series().allocated;
    const double end = allocated.empty() ? 1.0 : std::max(toX(allocated.back().timeNs), 1e-3);
    xAxis->setRange(0, end * 1.01);
    m_wholeRange = xAxis->range();
    refreshColumns();
}

void TimelineView::rebuildGraphs()
{
    // A long layer path widens the legend past the window: its last components say enough.
    legend->setWrap(m_grouping == GroupBy::Layer ? 6 : 12);
    clearGraphs();
    m_kernelLanes->graphsCleared();
    m_stack.clear();
    m_stackGroups.clear();
    m_reservedGroups.clear();
    m_envelope = m_reserved = m_predicted = m_measured = m_layerGraph = m_largestFree = nullptr;
    if (!m_document) {
        m_kernelLanes->setDocument(nullptr, 0);
        replot();
        return;
    }
    const TimelineSeries &timeline = series();
    std::int64_t top = 0;
    for (const SeriesPoint &point : m_overview.high)
        top = std::max(top, point.bytes);
    for (const SeriesPoint &point : timeline.allocated)
        top = std::max(top, point.bytes);
    for (const SeriesPoint &point : timeline.reserved)
        top = std::max(top, point.bytes);
    // The device's memory is drawn when it is near enough to matter: within a quarter above the top.
    const auto capacity = deviceCapacity();
    if (capacity && static_cast<double>(*capacity) <= static_cast<double>(top) * 1.25)
        top = std::max(top, *capacity);
    setValueAxis(top);
    addOverviewBand(); // behind the stack

    const std::size_t shown = std::min(timeline.groups.size(), kMaxStackedGroups);
    for (std::size_t i = 0; i <= shown; ++i) {
        const bool other = i == shown;
        if (other && timeline.groups.size() <= shown)
            break;
        QCPGraph *graph = addGraph();
        // A category has one colour in every trace; layers take theirs in order.
        const QColor band = other ? palette().mid().color()
                            : m_grouping == GroupBy::Category
                                ? paletteColor(palette::categoryColor(static_cast<Category>(timeline.groups[i].key)))
                                : paletteColor(palette::seriesColor(i));
        graph->setPen(QPen(band.darker(115), 0));
        QColor fill = band;
        fill.setAlpha(170);
        graph->setBrush(fill);
        graph->setLineStyle(QCPGraph::lsStepLeft);
        if (!m_stack.empty())
            graph->setChannelFillGraph(m_stack.back());
        QString name = other ? tr("other")
                       : m_grouping == GroupBy::Category
                           ? QString::fromUtf8(palette::categoryLabel(static_cast<Category>(timeline.groups[i].key)))
                       : m_grouping == GroupBy::Layer ? legendLayerName(QString::fromStdString(timeline.groups[i].label))
                                                      : QString::fromStdString(timeline.groups[i].label);
        graph->setName(name);
        m_stack.push_back(graph);
        m_stackGroups.push_back(other ? kRestOfGroups : i);
    }
    m_envelope = addGraph();
    m_envelope->setPen(QPen(palette().text().color(), 1));
    // The highest point of each column: a line over the bands, never a slab that hides them.
    m_envelope->setLineStyle(QCPGraph::lsStepLeft);
    m_envelope->setName(tr("allocated"));
    if (!timeline.reserved.empty()) {
        m_reserved = addGraph();
        m_reserved->setPen(QPen(palette().text().color(), 1, Qt::DashDotLine));
        m_reserved->setLineStyle(QCPGraph::lsStepLeft);
        m_reserved->setName(tr("reserved"));
    }
    // Each pool's (or stream's) reserved memory in its band's colour: what lies between the
    // line and the band is reserved by that pool and held by none of its blocks.
    for (const ReservedGroup &group : timeline.reservedGroups) {
        const auto band = std::find_if(timeline.groups.begin(), timeline.groups.end(),
                                       [&](const GroupSeries &g) { return g.key == group.key; });
        const std::size_t index = band != timeline.groups.end() ? std::size_t(band - timeline.groups.begin())
                                                                : timeline.groups.size() + m_reservedGroups.size();
        QCPGraph *graph = addGraph();
        graph->setPen(QPen(paletteColor(palette::seriesColor(index)).darker(130), 1.5, Qt::DashLine));
        graph->setLineStyle(QCPGraph::lsStepLeft);
        graph->setName(tr("reserved: %1").arg(QString::fromStdString(group.label)));
        m_reservedGroups.push_back(graph);
    }
    m_predicted = addGraph();
    m_predicted->setPen(QPen(paletteColor(palette::kPredicted), 2, Qt::DashLine));
    m_predicted->setLineStyle(QCPGraph::lsStepLeft);
    m_predicted->setName(tr("predicted"));
    m_measured = addGraph();
    m_measured->setPen(QPen(paletteColor(palette::kMeasured), 2));
    m_measured->setLineStyle(QCPGraph::lsStepLeft);
    m_measured->setName(m_comparisonName);
    m_layerGraph = addGraph();
    m_layerGraph->setPen(QPen(paletteColor(palette::kHighlight), 2.5));
    m_layerGraph->setLineStyle(QCPGraph::lsStepLeft);
    m_layerGraph->setName(m_layerName);
    m_largestFree = addGraph();
    m_largestFree->setPen(QPen(paletteColor(palette::kLargestFree), 1.5, Qt::DotLine));
    m_largestFree->setLineStyle(QCPGraph::lsStepLeft);
    m_largestFree->setName(tr("largest free block"));
    showCurve(m_predicted, m_prediction);
    showCurve(m_measured, m_comparison);
    showCurve(m_layerGraph, m_layerCurve);
    showCurve(m_largestFree, m_largestFreeCurve);
    m_kernelLanes->setDocument(m_document, m_originNs);
}

void TimelineView::rebuildItems()
{
    clearItems();
    m_marker = nullptr;
    m_peakLabel = nullptr;
    m_pinnedItems.clear();
    m_curvePeakItems.clear();
    m_measurementItems.clear();
    m_visibleItems.clear();
    m_phaseSpans.clear();
    if (!m_document)
        return;
    const Trace &trace = *m_document->trace;
    m_phaseSpans = phaseSpans(trace);
    m_stages.clear();
    std::copy_if(trace.ranges.begin(), trace.ranges.end(), std::back_inserter(m_stages),
                 [](const Range &range) { return range.stage != kNoStage; });

    const auto &peaks = m_document->summary.peak;
    if (peaks.primary) {
        const DevicePeak &peak = peaks.devices[*peaks.primary];
        auto *tracer = new QCPItemTracer(this);
        tracer->position->setCoords(toX(peak.timeNs), static_cast<double>(peak.allocatedBytes) / m_unitBytes);
        tracer->setStyle(QCPItemTracer::tsCircle);
        tracer->setSize(9);
        tracer->setPen(QPen(paletteColor(palette::kPeak), 2));
        auto *label = new QCPItemText(this);
        label->position->setParentAnchor(tracer->position);
        label->position->setCoords(6, -4);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        QString where = QString::fromUtf8(phaseName(m_document->summary.peakPhase));
        if (m_document->summary.peakLayer < trace.layers.size())
            where += tr(" of %1").arg(QString::fromStdString(trace.layers[m_document->summary.peakLayer].path));
        label->setText(tr("peak %1 · %2").arg(QString::fromStdString(formatBytes(peak.allocatedBytes)), where));
        label->setColor(paletteColor(palette::kPeak));
        QFont bold = font();
        bold.setBold(true);
        label->setFont(bold);
        m_peakLabel = label;
        placePeakLabel();
    }
    if (const auto capacity = deviceCapacity();
        capacity && static_cast<double>(*capacity) / m_unitBytes <= yAxis->range().upper) {
        const double y = static_cast<double>(*capacity) / m_unitBytes;
        auto *line = new QCPItemStraightLine(this);
        line->setObjectName(QStringLiteral("capacity"));
        line->point1->setCoords(0, y);
        line->point2->setCoords(1, y);
        line->setPen(QPen(paletteColor(palette::kPeak), 1.5, Qt::DashLine));
        auto *label = new QCPItemText(this);
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(0.995, y);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        label->setText(tr("device memory %1").arg(QString::fromStdString(formatBytes(*capacity))));
        label->setColor(paletteColor(palette::kPeak));
    }
    m_marker = new QCPItemStraightLine(this);
    m_marker->setPen(QPen(palette().highlight().color(), 1.5));
    setMarkedTime(m_markedTime);
    markCurvePeaks();
    updatePinnedItems();
}

void TimelineView::refreshColumns()
{
    if (!m_document || !m_envelope)
        return;
    const TimelineSeries &timeline = series();
    const int columns = std::max(1, axisRect()->width());
    m_columns = axisRect()->width();
    const std::int64_t begin = toNs(xAxis->range().lower), end = std::max(toNs(xAxis->range().upper), begin + 1);
    const auto stacked = stackColumns(timeline, begin, end, columns, &m_document->allocatedBlocks);
    updateVisibleItems(begin, end);
    m_kernelLanes->refresh(begin, end, columns);

    // Each column's bands as they stood at its highest point (blocks that came and went
    // within it included), so the stack's top is the envelope, a line along the highest points.
    QVector<double> keys, envelopeValues;
    for (const StackedColumn &column : stacked) {
        keys << toX(column.range.beginNs);
        envelopeValues << static_cast<double>(column.range.maxBytes) / m_unitBytes;
    }
    const auto tops = bandTops(stacked, m_stackGroups);
    for (std::size_t s = 0; s < m_stack.size(); ++s) {
        QVector<double> values;
        values.reserve(keys.size());
        for (const std::int64_t top : tops[s])
            values << static_cast<double>(top) / m_unitBytes;
        m_stack[s]->setData(keys, values, true);
    }
    m_envelope->setData(keys, envelopeValues, true);
    placePeakLabel();
    if (m_reserved) {
        QVector<double> reservedValues;
        for (const ColumnRange &column : reduceToColumns(timeline.reserved, begin, end, columns, &m_document->reservedBlocks))
            reservedValues << static_cast<double>(column.maxBytes) / m_unitBytes;
        m_reserved->setData(keys, reservedValues, true);
    }
    for (std::size_t g = 0; g < m_reservedGroups.size(); ++g) {
        QVector<double> values;
        for (const ColumnRange &column : reduceToColumns(timeline.reservedGroups[g].points, begin, end, columns))
            values << static_cast<double>(column.maxBytes) / m_unitBytes;
        m_reservedGroups[g]->setData(keys, values, true);
    }
    replot(QCustomPlot::rpQueuedReplot);
}

// The peak's label reads to the right of its marker, or to its left where it would run
// past the plot's edge (a peak at the end of the trace), so it is never cut.
void TimelineView::placePeakLabel()
{
    if (!m_peakLabel)
        return;
    const double x = m_peakLabel->position->parentAnchor()->pixelPosition().x();
    const double width = QFontMetricsF(m_peakLabel->font()).horizontalAdvance(m_peakLabel->text()) + 12;
    const bool left = x + width > axisRect()->right() && x - width >= axisRect()->left();
    m_peakLabel->position->setCoords(left ? -6 : 6, -4);
    m_peakLabel->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom);
}

void TimelineView::onRangeChanged(const QCPRange &)
{
    if (m_updating)
        return;
    m_updating = true;
    refreshColumns();
    m_updating = false;
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    // Hidden (a snapshot with no history): nothing to paint into until it is shown again.
    if (event->size().isEmpty())
        return;
    QCustomPlot::resizeEvent(event);
    refreshColumns();
}

QString TimelineView::hoverText(const QPoint &position) const
{
    if (m_kernelLanes->rect()->rect().contains(position) && m_kernelLanes->isShown())
        return m_kernelLanes->hoverText(position);
    if (m_document && position.y() < axisRect()->top() + axisRect()->height() * kStageStripHeight) {
        // The innermost stage under the cursor: the last to begin of those that hold it.
        const std::int64_t t = toNs(xAxis->pixelToCoord(position.x()));
        const Range *innermost = nullptr;
        for (const Range &stage : m_stages) {
            if (stage.beginNs > t)
                break;
            if (stage.endNs > t)
                innermost = &stage;
        }
        if (innermost)
            return tr("stage %1\n%2 ms, from %3 ms")
                .arg(QString::fromStdString(m_document->trace->stageNames[innermost->stage]))
                .arg(static_cast<double>(innermost->durationNs()) / 1e6, 0, 'f', 3)
                .arg(static_cast<double>(innermost->beginNs - m_originNs) / 1e6, 0, 'f', 3);
    }
    if (const auto block = blockAt(position))
        return blockText(*m_document, *block, m_originNs, 6);
    return momentText(*m_document, series(), m_originNs, toNs(xAxis->pixelToCoord(position.x())));
}

std::optional<std::size_t> TimelineView::blockAt(const QPoint &position) const
{
    if (!m_document || !m_document->blocks || !axisRect()->rect().contains(position))
        return std::nullopt;
    // The stack drawn in this pixel column is the one of the moment its highest point was
    // reached: look for the block there.
    const std::int64_t begin = toNs(xAxis->pixelToCoord(position.x()));
    const std::int64_t end = std::max(toNs(xAxis->pixelToCoord(position.x() + 1)), begin + 1);
    const auto column = reduceToColumns(series().allocated, begin, end, 1, &m_document->allocatedBlocks);
    if (column.empty())
        return std::nullopt;
    return blockAt(column.front().maxTimeNs, static_cast<std::int64_t>(yAxis->pixelToCoord(position.y()) * m_unitBytes));
}

std::optional<std::size_t> TimelineView::blockAt(std::int64_t timeNs, std::int64_t heightBytes) const
{
    if (!m_document || !m_document->blocks)
        return std::nullopt;
    std::vector<std::uint32_t> bands;
    for (std::size_t group : m_stackGroups) {
        if (group != kRestOfGroups)
            bands.push_back(series().groups[group].key);
    }
    return blockAtHeight(*m_document->trace, *m_document->blocks, series(), bands, timeNs, heightBytes);
}

void TimelineView::setPinnedBlock(std::optional<std::size_t> block)
{
    m_pinnedBlock = block;
    updatePinnedItems();
}

void TimelineView::updatePinnedItems()
{
    for (QCPAbstractItem *item : m_pinnedItems)
        removeItem(item);
    m_pinnedItems.clear();
    if (!m_document || !m_pinnedBlock || !m_document->blocks || *m_pinnedBlock >= m_document->blocks->size()) {
        replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const BlockIndex &index = *m_document->blocks;
    const MemoryEvents &events = m_document->trace->events;
    const std::size_t alloc = index.allocation(*m_pinnedBlock);
    const std::int64_t begin = events.timeNs(alloc);
    const std::int64_t end = index.endNs(*m_pinnedBlock) == INT64_MAX ? m_document->summary.lastNs : index.endNs(*m_pinnedBlock);
    auto *rect = new QCPItemRect(this);
    rect->setLayer(QStringLiteral("background"));
    rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->topLeft->setCoords(toX(begin), 0);
    rect->bottomRight->setCoords(toX(std::max(end, begin)), 1);
    rect->setPen(QPen(paletteColor(palette::kHighlight), 1, Qt::DashLine));
    rect->setBrush(paletteColor(palette::kHighlight, 28));
    auto *label = new QCPItemText(this);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(toX(begin), 0.12);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(tr(" pinned: %1 %2")
                       .arg(QString::fromStdString(formatBytes(events.deltaBytes(alloc))),
                            QString::fromUtf8(categoryName(events.category(alloc)))));
    label->setColor(paletteColor(palette::kHighlight));
    m_pinnedItems = {rect, label};
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::showSelection(const std::vector<SeriesPoint> &curve, const QString &name)
{
    m_highlightedLayer.reset();
    m_layerCurve.clear();
    for (const SeriesPoint &point : curve)
        m_layerCurve.push_back({point.timeNs, point.bytes});
    m_layerName = name;
    if (m_layerGraph)
        m_layerGraph->setName(name);
    showCurve(m_layerGraph, m_layerCurve);
    refreshColumns();
}

void TimelineView::zoomTo(std::int64_t beginNs, std::int64_t endNs)
{
    const double margin = std::max(toX(endNs) - toX(beginNs), 1e-6) * 0.05;
    xAxis->setRange(toX(beginNs) - margin, toX(endNs) + margin);
    refreshColumns();
}

bool TimelineView::showsKernelLanes() const
{
    return m_kernelLanes->isShown();
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    m_pressPosition = event->pos();
    // Shift + drag measures a range instead of panning.
    setSelectionRectMode(event->modifiers() & Qt::ShiftModifier ? QCP::srmCustom : QCP::srmNone);
    QCustomPlot::mousePressEvent(event);
}

void TimelineView::mouseReleaseEvent(QMouseEvent *event)
{
    QCustomPlot::mouseReleaseEvent(event);
    if (m_document && (event->pos() - m_pressPosition).manhattanLength() < 4 && event->button() == Qt::LeftButton
        && axisRect()->rect().contains(event->pos())) {
        clearMeasurement();
        Q_EMIT timeClicked(toNs(xAxis->pixelToCoord(event->pos().x())));
        Q_EMIT blockClicked(blockAt(event->pos()));
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    const bool overKernels = m_kernelLanes->isShown() && m_kernelLanes->rect()->rect().contains(event->pos());
    if (!m_document || event->buttons() != Qt::NoButton || !(axisRect()->rect().contains(event->pos()) || overKernels)) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), hoverText(event->pos()), this);
}

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    const QCPRange range = xAxis->range();
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        xAxis->scaleRange(0.8, range.center());
        break;
    case Qt::Key_Minus:
        xAxis->scaleRange(1.25, range.center());
        break;
    case Qt::Key_Left:
        xAxis->moveRange(-range.size() * 0.1);
        break;
    case Qt::Key_Right:
        xAxis->moveRange(range.size() * 0.1);
        break;
    case Qt::Key_Home:
    case Qt::Key_0:
        resetZoom();
        break;
    default:
        QCustomPlot::keyPressEvent(event);
        return;
    }
    replot(QCustomPlot::rpQueuedReplot);
}

} // namespace peaklens::gui
