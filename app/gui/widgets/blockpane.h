// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The block pinned by a click on the timeline: its size, address, when it was allocated and
// freed and where (phase, layer, step), its category, and its whole call stack, user code
// first and every frame one click away.

#include "tracedocument.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace peaklens::gui {

class BlockPane final : public QWidget
{
    Q_OBJECT

public:
    explicit BlockPane(QWidget *parent = nullptr);

    // A block of document->blocks, or none.
    void showBlock(const DocumentPtr &document, std::optional<std::size_t> block, std::int64_t originNs);
    std::optional<std::size_t> block() const { return m_block; }
    QString text() const;

Q_SIGNALS:
    // "Zoom to its lifetime": from its allocation to its free (or the trace's end).
    void lifetimeRequested(std::int64_t beginNs, std::int64_t endNs);

private:
    void showStack();

    DocumentPtr m_document;
    std::optional<std::size_t> m_block;
    QLabel *m_summary;
    QPlainTextEdit *m_stack;
    QCheckBox *m_allFrames;
    QPushButton *m_zoom;
};

} // namespace peaklens::gui
