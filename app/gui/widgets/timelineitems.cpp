// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline's items for what is in view: phase shading, a selected layer's ranges, the
// stages along the top and the step boundaries.
#include "timelineview.h"

#include "chartstyle.h"

#include "core/analysis/phasespans.h"
#include "core/report/palette.h"

#include <algorithm>
#include <limits>

namespace peaklens::gui {

namespace {

QColor phaseColor(Phase phase)
{
    return phase == Phase::Other ? QColor(0, 0, 0, 0) : paletteColor(palette::phaseColor(phase), 110);
}

} // namespace

// Shading, step boundaries and highlighted ranges only for what is in view, and only when
// few enough to tell apart: a 10,000-step trace zoomed out would be a wall of lines.
void TimelineView::updateVisibleItems(std::int64_t beginNs, std::int64_t endNs)
{
    for (QCPAbstractItem *item : m_visibleItems)
        removeItem(item);
    m_visibleItems.clear();
    if (!m_document)
        return;
    constexpr std::size_t kMaxShownSteps = 200, kMaxShownSpans = 1000;
    const Trace &trace = *m_document->trace;
    auto band = [this](std::int64_t begin, std::int64_t end, const QColor &color) {
        auto *rect = new QCPItemRect(this);
        rect->setLayer(QStringLiteral("background"));
        rect->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
        rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
        rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->topLeft->setCoords(toX(begin), 0);
        rect->bottomRight->setCoords(toX(end), 1);
        rect->setPen(Qt::NoPen);
        rect->setBrush(color);
        m_visibleItems.push_back(rect);
    };

    // Stages as a strip along the top, named where there is room.
    std::size_t shownStages = 0;
    for (const Range &stage : m_stages) {
        if (stage.beginNs >= endNs || shownStages >= kMaxShownSpans)
            break;
        if (stage.endNs <= beginNs)
            continue;
        ++shownStages;
        auto *rect = new QCPItemRect(this);
        rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->topLeft->setCoords(toX(std::max(stage.beginNs, beginNs)), 0);
        rect->bottomRight->setCoords(toX(std::min(stage.endNs, endNs)), kStageStripHeight);
        const QColor color = paletteColor(palette::seriesColor(stage.stage));
        rect->setPen(QPen(color.darker(140), 0));
        rect->setBrush(QColor(color.red(), color.green(), color.blue(), 150));
        m_visibleItems.push_back(rect);
        const QString name = QString::fromStdString(trace.stageNames[stage.stage]);
        const double width = rect->bottomRight->pixelPosition().x() - rect->topLeft->pixelPosition().x();
        if (width >= QFontMetricsF(font()).horizontalAdvance(name) + 8) {
            auto *label = new QCPItemText(this);
            label->position->setParentAnchor(rect->left);
            label->position->setCoords(4, 0);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            label->setText(name);
            label->setColor(palette().text().color());
            m_visibleItems.push_back(label);
        }
    }

    const auto firstStep = std::lower_bound(trace.steps.begin(), trace.steps.end(), beginNs,
                                            [](const Step &step, std::int64_t t) { return step.endNs < t; });
    const auto lastStep =
        std::lower_bound(firstStep, trace.steps.end(), endNs, [](const Step &step, std::int64_t t) { return step.beginNs < t; });
    if (static_cast<std::size_t>(lastStep - firstStep) > kMaxShownSteps)
        return;
    // Spans begin in order; none lasts longer than its step, so start one step early.
    const std::int64_t from = firstStep == trace.steps.begin() ? INT64_MIN : std::prev(firstStep)->beginNs;
    for (auto span = std::lower_bound(m_phaseSpans.begin(), m_phaseSpans.end(), from,
                                      [](const PhaseSpan &s, std::int64_t t) { return s.beginNs < t; });
         span != m_phaseSpans.end() && span->beginNs < endNs; ++span) {
        if (span->endNs > beginNs)
            band(span->beginNs, span->endNs, phaseColor(span->phase));
    }
    if (m_highlightedLayer) {
        // The layer's calls and its sub-layers' as one band each stretch they cover, joined
        // across gaps narrower than a pixel: one tint, not a stripe per nested range.
        std::vector<std::pair<std::int64_t, std::int64_t>> spans;
        for (const Range &range : trace.ranges) {
            if (range.endNs > beginNs && range.beginNs < endNs && trace.isWithin(range.layer, *m_highlightedLayer))
                spans.emplace_back(range.beginNs, range.endNs);
        }
        std::sort(spans.begin(), spans.end());
        const std::int64_t pixelNs = std::max<std::int64_t>((endNs - beginNs) / std::max(1, axisRect()->width()), 1);
        std::size_t shown = 0;
        for (std::size_t i = 0; i < spans.size() && shown < kMaxShownSpans;) {
            auto [from, to] = spans[i];
            for (++i; i < spans.size() && spans[i].first <= to + pixelNs; ++i)
                to = std::max(to, spans[i].second);
            band(from, to, paletteColor(palette::kHighlight, 40));
            ++shown;
        }
    }
    // A step's name where there is room for it: many steps in view are lines alone, but for
    // every few that fit.
    double labelsEnd = -std::numeric_limits<double>::infinity();
    for (auto step = firstStep; step != lastStep; ++step) {
        auto *line = new QCPItemStraightLine(this);
        line->point1->setCoords(toX(step->beginNs), 0);
        line->point2->setCoords(toX(step->beginNs), 1);
        line->setPen(QPen(palette().mid().color(), 1, Qt::DotLine));
        m_visibleItems.push_back(line);
        const QString text = tr(" step %1").arg(step->number);
        const double x = xAxis->coordToPixel(toX(step->beginNs));
        if (x < labelsEnd)
            continue;
        labelsEnd = x + fontMetrics().horizontalAdvance(text) + 8;
        auto *label = new QCPItemText(this);
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(toX(step->beginNs), 0);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->setText(text);
        label->setColor(palette().text().color());
        m_visibleItems.push_back(label);
    }
}

} // namespace peaklens::gui
