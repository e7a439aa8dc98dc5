// SPDX-License-Identifier: GPL-3.0-or-later
#include "flamegraphpane.h"

#include "flamegraphview.h"

#include "core/analysis/timelineseries.h"
#include "core/trace/units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace peaklens::gui {

FlameGraphPane::FlameGraphPane(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_keying(new QComboBox(this))
    , m_allFrames(new QCheckBox(tr("All frames"), this))
    , m_search(new QLineEdit(this))
    , m_matches(new QLabel(this))
    , m_view(new FlameGraphView(this))
    , m_scroll(new QScrollArea(this))
{
    m_keying->setObjectName(QStringLiteral("flameKeying"));
    m_keying->addItems({tr("by call stack"), tr("by module")});
    m_allFrames->setToolTip(tr("Also show the frames every stack shares: allocator, dispatcher, interpreter, libc"));
    m_search->setObjectName(QStringLiteral("flameSearch"));
    m_search->setPlaceholderText(tr("Search frames or modules"));
    m_search->setClearButtonEnabled(true);
    m_matches->setObjectName(QStringLiteral("flameMatches"));
    m_scroll->setWidget(m_view);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *header = new QHBoxLayout;
    header->addWidget(m_title, 1);
    header->addWidget(m_allFrames);
    header->addWidget(m_keying);
    layout->addLayout(header);
    auto *searchRow = new QHBoxLayout;
    searchRow->addWidget(m_search, 1);
    searchRow->addWidget(m_matches);
    layout->addLayout(searchRow);
    layout->addWidget(m_scroll, 1);

    connect(m_keying, &QComboBox::currentIndexChanged, this, &FlameGraphPane::rebuild);
    connect(m_allFrames, &QCheckBox::toggled, this, &FlameGraphPane::rebuild);
    connect(m_search, &QLineEdit::textChanged, this, &FlameGraphPane::search);
    connect(m_view, &FlameGraphView::nodeClicked, this, &FlameGraphPane::selectNode);
    connect(this, &FlameGraphPane::selectionChanged, this, &FlameGraphPane::drawSelection);
}

void FlameGraphPane::setKeying(FlameKeying keying)
{
    m_keying->setCurrentIndex(keying == FlameKeying::Module ? 1 : 0);
}

void FlameGraphPane::showAt(const DocumentPtr &document, std::optional<std::int64_t> timeNs)
{
    const bool newDocument = document != m_document;
    m_document = document;
    m_timeNs = timeNs;
    if (newDocument) {
        m_selectionJobs.drop(); // a curve still being drawn belongs to the previous trace
        const QSignalBlocker blocker(m_keying);
        const bool hasLayers = document && !document->trace->layers.empty();
        m_keying->setCurrentIndex(hasLayers && document->trace->stacks.stackCount() <= 1 ? 1 : 0);
        m_keying->setItemData(1, hasLayers ? QVariant() : QVariant(0), Qt::UserRole - 1); // greyed without layers
    }
    rebuild();
}

void FlameGraphPane::rebuild()
{
    const bool hadSelection = m_view->selected().has_value();
    if (!m_document) {
        m_view->setGraph(nullptr);
        m_title->clear();
        return;
    }
    const Trace &trace = *m_document->trace;
    FlameGraphOptions options;
    options.keying = m_keying->currentIndex() == 1 ? FlameKeying::Module : FlameKeying::Stack;
    options.machinery = m_allFrames->isChecked();
    m_allFrames->setEnabled(options.keying == FlameKeying::Stack);
    std::shared_ptr<const FlameGraph> graph;
    if (m_timeNs && m_document->blocks) {
        auto built =
            std::make_shared<FlameGraph>(buildFlameGraph(trace, m_document->blocks->liveAllocationsAt(*m_timeNs), options));
        built->device = m_document->device;
        built->timeNs = *m_timeNs;
        graph = std::move(built);
    } else if (m_document->summary.peak.liveAtPeak) {
        graph = std::make_shared<const FlameGraph>(buildFlameGraph(trace, *m_document->summary.peak.liveAtPeak, options));
    }
    m_view->setGraph(graph);
    m_view->setMinimumHeight(m_view->sizeHint().height());
    const std::int64_t bytes = graph && !graph->nodes.empty() ? graph->nodes.front().bytes : 0;
    const QString where = m_timeNs
                              ? tr("Live at %1 ms").arg(static_cast<double>(*m_timeNs - m_document->originNs()) / 1e6, 0, 'f', 3)
                              : tr("Live at the peak");
    m_title->setText(tr("<b>%1:</b> %2, %3").arg(where, QString::fromStdString(formatBytes(bytes)), m_keying->currentText()));
    search(m_search->text());
    if (hadSelection)
        Q_EMIT selectionChanged(std::nullopt, {});
}

void FlameGraphPane::search(const QString &text)
{
    const FlameGraph *graph = m_view->graph();
    if (!graph || text.isEmpty()) {
        m_view->setMatches({});
        m_view->setSearching(false);
        m_matches->clear();
        return;
    }
    const FlameSearch found = searchFlameGraph(*graph, text.toStdString());
    m_view->setMatches(found.nodes);
    m_view->setSearching(true);
    const double share =
        100.0 * static_cast<double>(found.bytes) / static_cast<double>(std::max<std::int64_t>(graph->nodes.front().bytes, 1));
    const QString count = found.nodes.size() == 1 ? tr("1 match") : tr("%1 matches").arg(found.nodes.size());
    m_matches->setText(
        found.nodes.empty()
            ? tr("no match")
            : tr("%1: %2, %3 %").arg(count, QString::fromStdString(formatBytes(found.bytes))).arg(share, 0, 'f', 1));
}

QString FlameGraphPane::searchSummary() const
{
    return m_matches->text();
}

void FlameGraphPane::selectNode(std::optional<std::uint32_t> node)
{
    const FlameGraph *graph = m_view->graph();
    m_view->setSelected(node);
    if (!graph || !node || *node == 0 || *node >= graph->nodes.size()) {
        Q_EMIT selectionChanged(std::nullopt, {});
        return;
    }
    const FlameNode &chosen = graph->nodes[*node];
    Q_EMIT selectionChanged(selectUnder(*m_document->trace, *graph, *node),
                            tr("memory under %1").arg(QString::fromStdString(chosen.label)));
}

void FlameGraphPane::drawSelection(const std::optional<FlameSelection> &selection, const QString &name)
{
    if (!m_document || !selection) {
        m_selectionJobs.drop();
        Q_EMIT selectionMemory({}, {});
        return;
    }
    // A pass over every event of the trace.
    m_selectionJobs.start(
        [document = m_document, selection = *selection](const Progress &) {
            const Trace &trace = *document->trace;
            return selectedMemory(trace, document->device,
                                  [&](std::size_t event) { return selection.containsEvent(trace, event); });
        },
        [this, name](const std::vector<SeriesPoint> &curve) { Q_EMIT selectionMemory(curve, name); });
}

} // namespace peaklens::gui
