// SPDX-License-Identifier: GPL-3.0-or-later
#include "blockpane.h"

#include "momenttext.h"

#include "core/analysis/allocationsites.h"

#include <QCheckBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace peaklens::gui {

BlockPane::BlockPane(QWidget *parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_stack(new QPlainTextEdit(this))
    , m_allFrames(new QCheckBox(tr("All frames"), this))
    , m_zoom(new QPushButton(tr("Zoom to its lifetime"), this))
{
    m_summary->setObjectName(QStringLiteral("blockSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_stack->setObjectName(QStringLiteral("blockStack"));
    m_stack->setReadOnly(true);
    m_stack->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_stack->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_allFrames->setToolTip(tr("Also show the frames every stack shares: allocator, dispatcher, interpreter, libc"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    auto *row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Call stack, innermost first"), this), 1);
    row->addWidget(m_allFrames);
    row->addWidget(m_zoom);
    layout->addLayout(row);
    layout->addWidget(m_stack, 1);
    connect(m_allFrames, &QCheckBox::toggled, this, &BlockPane::showStack);
    connect(m_zoom, &QPushButton::clicked, this, [this] {
        if (!m_document || !m_block)
            return;
        const BlockIndex &index = *m_document->blocks;
        const std::int64_t begin = m_document->trace->events.timeNs(index.allocation(*m_block));
        const std::int64_t end = index.endNs(*m_block) == INT64_MAX ? m_document->summary.lastNs : index.endNs(*m_block);
        Q_EMIT lifetimeRequested(begin, std::max(end, begin + 1));
    });
    showBlock(nullptr, std::nullopt, 0);
}

void BlockPane::showBlock(const DocumentPtr &document, std::optional<std::size_t> block, std::int64_t originNs)
{
    m_document = document;
    m_block = document && document->blocks && block && *block < document->blocks->size() ? block : std::nullopt;
    m_zoom->setEnabled(m_block.has_value());
    m_allFrames->setEnabled(m_block.has_value());
    if (!m_block) {
        m_summary->setText(tr("Click a block on the timeline to pin it here: its size, its lifetime, the layer and "
                              "phase that allocated it, and its call stack."));
        m_stack->clear();
        return;
    }
    m_summary->setText(
        blockText(*document, *m_block, originNs, 0).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    showStack();
}

QString BlockPane::text() const
{
    return m_summary->text() + QLatin1Char('\n') + m_stack->toPlainText();
}

void BlockPane::showStack()
{
    if (!m_document || !m_block) {
        m_stack->clear();
        return;
    }
    const Trace &trace = *m_document->trace;
    const std::uint32_t stack = trace.events.stack(m_document->blocks->allocation(*m_block));
    if (stack == StackTable::kEmptyStack) {
        m_stack->setPlainText(tr("The trace recorded no call stack for this block."));
        return;
    }
    QStringList lines;
    for (const StackLine &line : describeStack(trace.stacks, *m_document->sites, stack, m_allFrames->isChecked()))
        lines << QString::fromUtf8(frameKindName(line.kind)).leftJustified(12) + QString::fromStdString(line.text);
    m_stack->setPlainText(lines.join(QLatin1Char('\n')));
}

} // namespace peaklens::gui
