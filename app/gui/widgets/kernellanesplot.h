// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel lanes under the memory timeline (as in Nsight Systems): one row per stream of the
// timeline's device, each pixel column filled as far as a kernel ran in it, on the memory
// chart's clock, so a step of memory lines up with the kernel that caused it. Hovering
// names the kernel under the cursor.

#include "tracedocument.h"

#include <qcustomplot.h>

#include <optional>

namespace peaklens::gui {

class KernelLanesPlot
{
public:
    // Lays its axis rect out under `memory` in `plot`'s layout (row `row`) when there are lanes.
    KernelLanesPlot(QCustomPlot *plot, QCPAxisRect *memory, int row);

    void setDocument(const DocumentPtr &document, std::int64_t originNs);
    // The plot's graphs were all removed (QCustomPlot::clearGraphs), the lanes' too.
    void graphsCleared();
    bool isShown() const { return m_shown; }
    // Recomputes the columns for the visible span.
    void refresh(std::int64_t beginNs, std::int64_t endNs, int columns);
    // The kernel under a point of the plot, as tooltip text; empty off the lanes.
    QString hoverText(const QPoint &position) const;
    QCPAxisRect *rect() const { return m_rect; }

private:
    void show(bool shown);
    std::optional<std::size_t> laneAt(const QPoint &position) const;

    QCustomPlot *m_plot;
    QCPAxisRect *m_memory;
    QCPAxisRect *m_rect;
    QCPMarginGroup *m_margins;
    int m_row;
    bool m_shown = false;
    DocumentPtr m_document;
    std::int64_t m_originNs = 0;
    std::vector<std::size_t> m_lanes; // shown lanes of document->kernels, top first
    std::vector<QCPGraph *> m_bases;  // per shown lane: its row's floor, and its fill up to the share
    std::vector<QCPGraph *> m_fills;
    std::vector<std::vector<float>> m_busy; // per shown lane, the last columns computed
    std::int64_t m_beginNs = 0, m_endNs = 1;
};

} // namespace peaklens::gui
