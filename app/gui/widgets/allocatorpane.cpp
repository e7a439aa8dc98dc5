// SPDX-License-Identifier: GPL-3.0-or-later
#include "allocatorpane.h"

#include "momenttext.h"

#include "core/analysis/poolfigures.h"
#include "core/analysis/timelineseries.h"
#include "core/report/palette.h"
#include "core/trace/units.h"

#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <array>
#include <map>

namespace peaklens::gui {

namespace {

QString bytes(std::int64_t value)
{
    return QString::fromStdString(formatBytes(value));
}

} // namespace

// Segments as bars on one bytes scale, largest segment the full width, one per row; blocks
// in their category's colour, free runs left blank with a thin outline.
class SegmentMap final : public QWidget
{
public:
    static constexpr int kRow = 16;
    static constexpr std::size_t kMaxRows = 400;

    explicit SegmentMap(QWidget *parent)
        : QWidget(parent)
    {
        setObjectName(QStringLiteral("segmentMap"));
        setMouseTracking(true);
    }

    void setState(DocumentPtr document, std::optional<AllocatorState> state)
    {
        m_document = std::move(document);
        m_state = std::move(state);
        const std::size_t rows =
            m_state ? std::min(m_state->segments.size(), kMaxRows) + (m_state->outsideBlocks.empty() ? 0 : 1) : 0;
        setMinimumHeight(static_cast<int>(rows) * kRow + 4);
        update();
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        painter.fillRect(rect(), palette().base());
        if (!m_state)
            return;
        const double scale = static_cast<double>(width() - 8) / static_cast<double>(std::max<std::int64_t>(widest(), 1));
        const auto drawBlocks = [&](const std::vector<AllocatorBlock> &blocks, std::uint64_t base, int top) {
            for (const AllocatorBlock &block : blocks) {
                const double x = 4 + static_cast<double>(block.addr - base) * scale;
                const double w = std::max(static_cast<double>(block.bytes) * scale, 1.0);
                QColor fill(static_cast<QRgb>(palette::categoryColor(m_document->trace->events.category(block.event))));
                painter.fillRect(QRectF(x, top + 1, w, kRow - 3), fill);
            }
        };
        int top = 2;
        for (std::size_t s = 0; s < std::min(m_state->segments.size(), kMaxRows); ++s, top += kRow) {
            const AllocatorSegment &segment = m_state->segments[s];
            const QRectF bar(4, top + 1, static_cast<double>(segment.bytes) * scale, kRow - 3);
            painter.setPen(palette().mid().color());
            painter.drawRect(bar);
            drawBlocks(segment.blocks, segment.addr, top);
        }
        if (!m_state->outsideBlocks.empty()) {
            painter.setPen(palette().text().color());
            // Outside blocks side by side from the left, in address order.
            double x = 4;
            for (const AllocatorBlock &block : m_state->outsideBlocks) {
                const double w = std::max(static_cast<double>(block.bytes) * scale, 1.0);
                painter.fillRect(
                    QRectF(x, top + 1, w, kRow - 3),
                    QColor(static_cast<QRgb>(palette::categoryColor(m_document->trace->events.category(block.event)))));
                x += w;
            }
        }
    }

    bool event(QEvent *event) override
    {
        if (event->type() != QEvent::ToolTip || !m_state)
            return QWidget::event(event);
        auto *help = static_cast<QHelpEvent *>(event);
        const auto row = static_cast<std::size_t>(std::max(0, (help->pos().y() - 2) / kRow));
        QString text;
        if (row < std::min(m_state->segments.size(), kMaxRows)) {
            const AllocatorSegment &segment = m_state->segments[row];
            const double scale = static_cast<double>(width() - 8) / static_cast<double>(std::max<std::int64_t>(widest(), 1));
            const auto addr = segment.addr + static_cast<std::uint64_t>(std::max(0.0, (help->pos().x() - 4) / scale));
            const Lane &lane = m_document->trace->lanes[segment.lane];
            text = QObject::tr("segment at 0x%1 (%6, %7): %2, %3 allocated, %4 free, largest free run %5")
                       .arg(segment.addr, 0, 16)
                       .arg(bytes(segment.bytes), bytes(segment.allocatedBytes), bytes(segment.freeBytes),
                            bytes(segment.largestFreeBytes), QString::fromStdString(poolLabel(lane.pool)),
                            QString::fromStdString(streamLabel(lane.stream)));
            for (const AllocatorBlock &block : segment.blocks) {
                if (addr >= block.addr && addr < block.addr + static_cast<std::uint64_t>(block.bytes)) {
                    const MemoryEvents &events = m_document->trace->events;
                    text += QObject::tr("\n%1 %2 block at 0x%3")
                                .arg(bytes(block.bytes), QString::fromUtf8(categoryName(events.category(block.event))))
                                .arg(block.addr, 0, 16);
                    const std::uint32_t layer = events.layer(block.event);
                    if (layer < m_document->trace->layers.size())
                        text += QObject::tr(", from %1").arg(QString::fromStdString(m_document->trace->layers[layer].path));
                }
            }
        } else if (!m_state->outsideBlocks.empty()) {
            text = QObject::tr("%1 in %2 blocks that lie in no segment the trace saw being reserved")
                       .arg(bytes(m_state->outsideBytes))
                       .arg(m_state->outsideBlocks.size());
        }
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }

private:
    std::int64_t widest() const
    {
        std::int64_t widest = m_state->outsideBytes;
        for (const AllocatorSegment &segment : m_state->segments)
            widest = std::max(widest, segment.bytes);
        return widest;
    }

    DocumentPtr m_document;
    std::optional<AllocatorState> m_state;
};

AllocatorPane::AllocatorPane(QWidget *parent)
    : QWidget(parent)
    , m_figures(new QLabel(this))
    , m_ooms(new QLabel(this))
    , m_map(new SegmentMap(this))
{
    m_figures->setObjectName(QStringLiteral("allocatorFigures"));
    m_figures->setWordWrap(true);
    m_figures->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_ooms->setObjectName(QStringLiteral("allocatorOoms"));
    m_ooms->setWordWrap(true);
    m_ooms->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_map);
    scroll->setWidgetResizable(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_figures);
    layout->addWidget(m_ooms);
    layout->addWidget(scroll, 1);
}

AllocatorPane::~AllocatorPane() = default;

void AllocatorPane::showAt(const DocumentPtr &document, std::optional<std::int64_t> timeNs)
{
    if (document && document != m_document) {
        m_seriesJobs.start([document](const Progress &) { return largestFreeCurve(*document->trace, document->device); },
                           [this, document](const std::vector<SeriesPoint> &curve) { Q_EMIT largestFreeReady(document, curve); });
    }
    m_document = document;
    m_map->setState(nullptr, std::nullopt);
    m_ooms->clear();
    if (!document) {
        m_figures->clear();
        return;
    }
    m_figures->setText(tr("Reading the allocator's state…"));
    const std::int64_t at =
        timeNs.value_or(document->summary.peak.primary ? document->summary.peak.devices[*document->summary.peak.primary].timeNs
                                                       : document->summary.lastNs);
    m_stateJobs.start(
        [document, at](const Progress &) {
            Result result;
            result.state = allocatorStateAt(*document->trace, document->device, at);
            for (const AllocatorSegment &segment : result.state.segments) {
                for (const AllocatorBlock &block : segment.blocks)
                    result.largestLiveBytes = std::max(result.largestLiveBytes, block.bytes);
            }
            for (const AllocatorBlock &block : result.state.outsideBlocks)
                result.largestLiveBytes = std::max(result.largestLiveBytes, block.bytes);
            result.ooms = analyseOutOfMemory(*document->trace);
            return result;
        },
        [this](const Result &result) { present(result); });
}

void AllocatorPane::present(const Result &result)
{
    const AllocatorState &state = result.state;
    const std::int64_t originNs = m_document->originNs();
    const double ms = static_cast<double>(state.timeNs - originNs) / 1e6;
    QString text =
        isStateOnly(*m_document->trace)
            ? tr("<b>Allocator at dump time</b> on %1: ").arg(QString::fromStdString(state.device.toString()))
            : tr("<b>Allocator at %1 ms</b> on %2: ").arg(ms, 0, 'f', 3).arg(QString::fromStdString(state.device.toString()));
    switch (state.layout) {
    case ReservedLayout::None:
        text += tr("the trace records no reserved memory, so there are no segments to show.");
        break;
    case ReservedLayout::Totals:
        text += tr("reserved %1, allocated %2, so %3 reserved and unused. The trace gives reserved memory only as "
                   "totals, not where its segments lie, so the largest free block is unknown.")
                    .arg(bytes(state.reservedBytes), bytes(state.allocatedBytes), bytes(state.freeBytes));
        break;
    case ReservedLayout::Segments:
        text += tr("%1 segments reserve %2; %3 allocated, %4 free")
                    .arg(state.segments.size())
                    .arg(bytes(state.reservedBytes), bytes(state.allocatedBytes), bytes(state.freeBytes));
        if (state.largestFreeBytes) {
            text += tr(", the largest free block %1").arg(bytes(*state.largestFreeBytes));
            if (const auto share = state.unusableShare(result.largestLiveBytes); share && result.largestLiveBytes > 0)
                text += tr(". %1 % of reserved memory lies in free runs too small for a request as large as the "
                           "largest live block (%2)")
                            .arg(*share * 100.0, 0, 'f', 1)
                            .arg(bytes(result.largestLiveBytes));
        }
        text += QLatin1Char('.');
        if (state.unplacedReservedBytes > 0)
            text +=
                tr(" %1 reserved lies in segments whose place the trace does not say.").arg(bytes(state.unplacedReservedBytes));
        if (state.outsideBytes > 0)
            text += tr(" %1 in blocks outside the known segments (bottom row).").arg(bytes(state.outsideBytes));
        // Per memory pool, where there is more than one: what each reserves, and holds free.
        if (hasPrivatePools(*m_document->trace)) {
            std::map<MemoryPool, std::array<std::int64_t, 3>> pools; // reserved, allocated, free
            for (const AllocatorSegment &segment : state.segments) {
                auto &figures = pools[m_document->trace->lanes[segment.lane].pool];
                figures[0] += segment.bytes;
                figures[1] += segment.allocatedBytes;
                figures[2] += segment.freeBytes;
            }
            for (const auto &[pool, figures] : pools)
                text +=
                    tr("<br>%1: %2 reserved, %3 allocated, %4 free in its segments")
                        .arg(QString::fromStdString(poolLabel(pool)), bytes(figures[0]), bytes(figures[1]), bytes(figures[2]));
        }
        break;
    }
    if (!state.blocksKnown)
        text += tr(" The recording saw the allocator's segments but not the tensors in them.");
    m_figures->setText(text);
    QStringList ooms;
    for (const OomAnalysis &oom : result.ooms) {
        const QString verdict = QString::fromUtf8(oomVerdictName(oom.verdict));
        ooms << tr("<b>Out of memory (%1)</b> at %2 ms: %3")
                    .arg(oom.verdict == OomVerdict::Fragmentation ? tr("<span style='color:#b42318'>%1</span>").arg(verdict)
                                                                  : verdict)
                    .arg(static_cast<double>(oom.timeNs - originNs) / 1e6, 0, 'f', 3)
                    .arg(QString::fromStdString(oom.explanation).toHtmlEscaped());
    }
    m_ooms->setText(ooms.join(QStringLiteral("<br>")));
    m_ooms->setVisible(!ooms.isEmpty());
    m_map->setState(m_document, state.segments.empty() && state.outsideBlocks.empty() ? std::nullopt : std::optional(state));
    Q_EMIT shown();
}

QString AllocatorPane::text() const
{
    return m_figures->text() + QLatin1Char('\n') + m_ooms->text();
}

} // namespace peaklens::gui
