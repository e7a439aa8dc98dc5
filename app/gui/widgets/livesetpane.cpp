// SPDX-License-Identifier: GPL-3.0-or-later
#include "livesetpane.h"

#include "models/livesetmodel.h"
#include "tables.h"

#include "core/analysis/allocationsites.h"
#include "core/trace/units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

namespace peaklens::gui {

LiveSetPane::LiveSetPane(QWidget *parent)
    : QWidget(parent)
    , m_model(new LiveSetModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_grouping(new QComboBox(this))
    , m_pattern(new QLineEdit(this))
    , m_title(new QLabel(this))
    , m_stack(new QPlainTextEdit(this))
    , m_allFrames(new QCheckBox(tr("All frames"), this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(LiveSetModel::SortRole);
    m_view = makeTable(m_proxy, this);
    m_view->horizontalHeader()->setSectionResizeMode(LiveSetModel::NameColumn, QHeaderView::Stretch);
    m_view->sortByColumn(LiveSetModel::BytesColumn, Qt::DescendingOrder);
    m_grouping->setObjectName(QStringLiteral("liveGrouping"));
    m_grouping->addItems({tr("by layer"), tr("by category"), tr("by allocation site"), tr("by source file"),
                          tr("by frames matching"), tr("by stage"), tr("by compile context"), tr("by user metadata"),
                          tr("by memory pool"), tr("by stream")});
    m_pattern->setObjectName(QStringLiteral("livePattern"));
    m_pattern->setPlaceholderText(tr("regular expression"));
    m_pattern->setToolTip(tr("Groups each block by the innermost frame of its stack, \"function (path:line)\", that "
                             "this expression matches: by its first capture group where it has one. "
                             "/(\\w+)\\.py: groups by file name."));
    m_pattern->setClearButtonEnabled(true);
    m_pattern->hide();
    m_title->setWordWrap(true);
    m_stack->setObjectName(QStringLiteral("stackFrames"));
    m_stack->setReadOnly(true);
    m_stack->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_stack->setPlaceholderText(tr("Group by allocation site and select one to see its call stack."));
    m_stack->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_stack->setMaximumHeight(m_stack->fontMetrics().height() * 11);
    m_allFrames->setObjectName(QStringLiteral("allFrames"));
    m_allFrames->setToolTip(tr("Also show the frames every stack shares: allocator, dispatcher, interpreter, libc"));

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *header = new QHBoxLayout;
    header->addWidget(m_title, 1);
    header->addWidget(m_grouping);
    header->addWidget(m_pattern);
    layout->addLayout(header);
    layout->addWidget(m_view);
    auto *stackHeader = new QHBoxLayout;
    stackHeader->addWidget(new QLabel(tr("Call stack of the selected site, innermost first"), this), 1);
    stackHeader->addWidget(m_allFrames);
    layout->addLayout(stackHeader);
    layout->addWidget(m_stack);

    connect(m_grouping, &QComboBox::currentIndexChanged, this, [this] {
        const bool byPattern = m_grouping->currentIndex() == int(LiveSetModel::Grouping::Pattern);
        m_pattern->setVisible(byPattern);
        if (byPattern && m_pattern->text().isEmpty())
            m_pattern->setFocus();
        showLiveSet(m_document, m_timeNs);
    });
    connect(m_pattern, &QLineEdit::editingFinished, this, [this] { showLiveSet(m_document, m_timeNs); });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &LiveSetPane::showStack);
    connect(m_allFrames, &QCheckBox::toggled, this, [this] { showStack(m_view->currentIndex()); });
}

void LiveSetPane::setDefaultGrouping(bool hasLayers)
{
    const QSignalBlocker blocker(m_grouping);
    m_grouping->setCurrentIndex(int(hasLayers ? LiveSetModel::Grouping::Layer : LiveSetModel::Grouping::Category));
}

void LiveSetPane::setGrouping(const BlockGrouping &grouping)
{
    {
        const QSignalBlocker blocker(m_grouping);
        const bool byPattern = grouping.kind == BlockGrouping::Kind::Regex;
        m_grouping->setCurrentIndex(int(LiveSetModel::groupingOf(grouping.kind)));
        m_pattern->setText(byPattern ? QString::fromStdString(grouping.pattern) : QString());
        m_pattern->setVisible(byPattern);
    }
    showLiveSet(m_document, m_timeNs);
}

void LiveSetPane::showLiveSet(const DocumentPtr &document, std::optional<std::int64_t> timeNs)
{
    m_document = document;
    m_timeNs = timeNs;
    if (!document)
        return;
    const Trace &trace = *document->trace;
    LiveSet live;
    const auto &peak = document->summary.peak;
    const auto bytes = [](std::int64_t value) { return QString::fromStdString(formatBytes(value)); };
    if (timeNs) {
        live = liveSetAt(trace, document->device, *timeNs);
        m_title->setText(tr("<b>Live at %1 ms:</b> %2 in %3 blocks")
                             .arg(static_cast<double>(*timeNs - document->originNs()) / 1e6, 0, 'f', 3)
                             .arg(bytes(live.bytes))
                             .arg(live.allocations.size()));
    } else if (peak.liveAtPeak) {
        live = *peak.liveAtPeak;
        m_title->setText(tr("<b>Live at the peak:</b> %1 in %2 blocks on %3")
                             .arg(bytes(live.bytes))
                             .arg(live.allocations.size())
                             .arg(QString::fromStdString(live.device.toString())));
    } else {
        m_title->setText(tr("The trace allocates nothing."));
    }
    const auto grouping = static_cast<LiveSetModel::Grouping>(m_grouping->currentIndex());
    const bool waitsForPattern = grouping == LiveSetModel::Grouping::Pattern && m_pattern->text().isEmpty();
    m_model->resetData(document, live, grouping, m_pattern->text());
    if (waitsForPattern)
        m_title->setText(m_title->text() + tr(" <i>Type a regular expression to group by the frames it matches.</i>"));
    else if (!m_model->problem().isEmpty())
        m_title->setText(m_title->text() + QStringLiteral(" <i>%1</i>").arg(m_model->problem().toHtmlEscaped()));
    m_view->resizeColumnsToContents();
    m_view->horizontalHeader()->setSectionResizeMode(LiveSetModel::NameColumn, QHeaderView::Stretch);
    m_stack->clear();
}

void LiveSetPane::showStack(const QModelIndex &current)
{
    const QVariant stack = m_proxy->data(current, LiveSetModel::StackRole);
    if (!m_document || !stack.isValid()) {
        m_stack->clear();
        return;
    }
    const AllocationSites &sites = *m_document->sites;
    const Trace &trace = *m_document->trace;
    const auto id = stack.toUInt();
    const std::uint32_t site = sites.siteOf(id);
    QStringList lines{QString::fromStdString(sites.location(site))};
    const auto callers = sites.callers(id, 8);
    for (const std::string &caller : callers)
        lines << QStringLiteral("  called from ") + QString::fromStdString(caller);
    lines << QString();
    for (const StackLine &line : describeStack(trace.stacks, sites, id, m_allFrames->isChecked()))
        lines << QString::fromUtf8(frameKindName(line.kind)).leftJustified(12) + QString::fromStdString(line.text);
    m_stack->setPlainText(lines.join(QLatin1Char('\n')));
}

} // namespace peaklens::gui
