// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The memory timeline: allocated bytes stacked by category or by layer, the allocated
// envelope and reserved bytes, phase shading, step boundaries, the peak, and a predicted
// curve drawn dashed over it; kernel lanes under it. Every event is drawn: each pixel column
// shows the lowest and highest value it holds (core's level of detail), recomputed for the
// visible range. Hovering names the block under the cursor; a click pins it.

#include "kernellanesplot.h"
#include "tracedocument.h"

#include "core/analysis/phasespans.h"
#include "core/plan/predictor.h"

#include <qcustomplot.h>

#include <memory>
#include <optional>

namespace peaklens::gui {

class TimelineView final : public QCustomPlot
{
    Q_OBJECT

public:
    explicit TimelineView(QWidget *parent = nullptr);

    void setDocument(const DocumentPtr &document);
    // A file's levels chunk by chunk (fileoverview.h), the band between each chunk's lowest
    // and highest allocated bytes, named `name`: alone before a document, or behind one that
    // is a window of the file (the whole run around it). The next setDocument removes it.
    void showOverview(const std::vector<SeriesPoint> &high, const std::vector<SeriesPoint> &low, const QString &name);
    bool showsOverview() const { return !m_overview.high.empty(); }
    // The same trace grown (followed while written): the curves are redrawn, the picked
    // time, highlighted layer and comparison stay, and the view keeps following the end
    // unless the user zoomed or panned away from the whole trace.
    void growDocument(const DocumentPtr &document);
    void setGrouping(GroupBy grouping);
    GroupBy grouping() const { return m_grouping; }
    // The predicted curve of the current toggles; empty hides it.
    void setPrediction(const std::vector<SeriesPoint> &curve);
    // A rerun's measured curve over the same step, on this trace's clock, its peak marked;
    // empty hides it.
    void setComparison(const std::vector<SeriesPoint> &curve, const QString &name);
    const std::vector<SeriesPoint> &comparison() const { return m_comparison; }
    // The allocator's largest free block over time (from its segments), dotted; empty hides it.
    void setLargestFree(const std::vector<SeriesPoint> &curve);
    // A measured range (Shift+drag), shaded with what it measured written on it, until the
    // next click.
    void showMeasurement(std::int64_t beginNs, std::int64_t endNs, const QString &text);
    void clearMeasurement();
    // A time picked by the user (live set shown for it), or none for the peak.
    void setMarkedTime(std::optional<std::int64_t> timeNs);
    // Shades the layer's ranges and draws its memory (with its sub-layers') over the stack.
    void highlightLayer(std::optional<std::uint32_t> layer);
    // Draws the memory of a selection of blocks (a flame graph's frame) over the stack, as
    // highlightLayer draws a layer's; an empty curve hides it.
    void showSelection(const std::vector<SeriesPoint> &curve, const QString &name);
    // Shades the lifetime of a block of document->blocks (the pinned one), or none.
    void setPinnedBlock(std::optional<std::size_t> block);
    // The block drawn under a point of the widget, if any; the block drawn at a height (in
    // bytes) at a time.
    std::optional<std::size_t> blockAt(const QPoint &position) const;
    std::optional<std::size_t> blockAt(std::int64_t timeNs, std::int64_t heightBytes) const;
    std::int64_t originNs() const { return m_originNs; }
    // The time at the left edge of the plot, on the trace's clock.
    std::int64_t visibleBeginNs() const { return toNs(xAxis->range().lower); }
    // Shows [beginNs, endNs) with a margin.
    void zoomTo(std::int64_t beginNs, std::int64_t endNs);
    bool showsKernelLanes() const;
    void resetZoom();
    // What the trace's device can hold (its device.memory), when the trace says.
    std::optional<std::int64_t> deviceCapacity() const;
    // Recomputes the visible columns now (normally done on every zoom or pan).
    void refreshColumns();

Q_SIGNALS:
    void timeClicked(std::int64_t timeNs);
    // A click on the stack: the block under it (none above the stack).
    void blockClicked(std::optional<std::size_t> block);
    void rangeSelected(std::int64_t beginNs, std::int64_t endNs);

protected:
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    const TimelineSeries &series() const;
    void rebuildGraphs();
    void rebuildItems();
    void updateVisibleItems(std::int64_t beginNs, std::int64_t endNs);
    void onRangeChanged(const QCPRange &range);
    void placePeakLabel();
    double toX(std::int64_t ns) const;
    std::int64_t toNs(double x) const;
    QString hoverText(const QPoint &position) const;
    void updatePinnedItems();
    void showCurve(QCPGraph *graph, const std::vector<SeriesPoint> &curve);
    // The overview's band (showOverview), when there is one.
    void addOverviewBand();
    // The value axis for values up to `top` bytes, in the unit that suits them.
    void setValueAxis(std::int64_t top);
    // Marks the highest point of the predicted and of the measured curve, each labelled.
    void markCurvePeaks();

    DocumentPtr m_document;
    struct
    {
        std::vector<SeriesPoint> high, low;
        QString name;
    } m_overview;
    GroupBy m_grouping = GroupBy::Category;
    std::vector<SeriesPoint> m_prediction;
    std::vector<SeriesPoint> m_comparison;
    QString m_comparisonName;
    std::optional<std::int64_t> m_markedTime;
    std::optional<std::uint32_t> m_highlightedLayer;
    std::int64_t m_originNs = 0;
    double m_unitBytes = 1;                 // bytes per unit of the value axis
    std::vector<QCPGraph *> m_stack;        // one per shown group, bottom first
    std::vector<std::size_t> m_stackGroups; // index into series().groups; SIZE_MAX: "other"
    QCPGraph *m_envelope = nullptr;
    static constexpr double kStageStripHeight = 0.035; // of the plot's height, along its top
    QCPGraph *m_reserved = nullptr;
    std::vector<QCPGraph *> m_reservedGroups; // a pool's or stream's reserved, as series().reservedGroups
    QCPGraph *m_predicted = nullptr;
    QCPGraph *m_measured = nullptr;
    QCPGraph *m_layerGraph = nullptr; // memory of the selected layer
    QCPGraph *m_largestFree = nullptr;
    std::vector<SeriesPoint> m_largestFreeCurve;
    std::vector<SeriesPoint> m_layerCurve;
    QString m_layerName;
    std::vector<QCPAbstractItem *> m_curvePeakItems;
    std::vector<QCPAbstractItem *> m_measurementItems;
    QCPItemStraightLine *m_marker = nullptr;
    QCPItemText *m_peakLabel = nullptr;
    std::optional<std::size_t> m_pinnedBlock;
    std::vector<QCPAbstractItem *> m_pinnedItems;
    std::unique_ptr<KernelLanesPlot> m_kernelLanes;
    std::vector<PhaseSpan> m_phaseSpans; // by begin time
    std::vector<Range> m_stages;         // the trace's stages (range.h), by begin time
    std::vector<QCPAbstractItem *> m_visibleItems;
    QPoint m_pressPosition;
    bool m_updating = false;
    int m_columns = 0;     // pixel columns of the data shown
    QCPRange m_wholeRange; // what resetZoom showed last: the view the user has not moved
};

} // namespace peaklens::gui
