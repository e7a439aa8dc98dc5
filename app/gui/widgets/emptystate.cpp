// SPDX-License-Identifier: GPL-3.0-or-later
#include "emptystate.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace peaklens::gui {

EmptyState::EmptyState(QAction *open, QAction *record, QWidget *parent)
    : QWidget(parent)
    , m_problem(new QLabel(this))
{
    setObjectName(QStringLiteral("emptyState"));
    auto *title = new QLabel(tr("Open a trace or record one"), this);
    QFont large = title->font();
    large.setPointSizeF(large.pointSizeF() * 1.6);
    large.setBold(true);
    title->setFont(large);
    title->setAlignment(Qt::AlignCenter);
    auto *formats = new QLabel(tr("PeakLens reads its own traces (*.peaklens), PyTorch memory snapshots (*.pickle), "
                                  "Kineto traces and memory-timeline exports (*.json, *.json.gz).\n"
                                  "Drop files here, or record a training run under the CUPTI collector."),
                               this);
    formats->setAlignment(Qt::AlignCenter);
    formats->setWordWrap(true);
    formats->setForegroundRole(QPalette::PlaceholderText);
    m_problem->setObjectName(QStringLiteral("openProblem"));
    m_problem->setAlignment(Qt::AlignCenter);
    m_problem->setWordWrap(true);
    m_problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problem->setStyleSheet(QStringLiteral("color: #b42318"));
    m_problem->setVisible(false);

    const auto button = [this](QAction *action, const QString &text) {
        auto *push = new QPushButton(text, this);
        push->setToolTip(action->toolTip());
        push->setMinimumWidth(push->sizeHint().width() + 24);
        connect(push, &QPushButton::clicked, action, &QAction::trigger);
        return push;
    };
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    QPushButton *openButton = button(open, tr("Open a trace…"));
    openButton->setDefault(true);
    buttons->addWidget(openButton);
    buttons->addSpacing(12);
    buttons->addWidget(button(record, tr("Record a run…")));
    buttons->addStretch();

    auto *layout = new QVBoxLayout(this);
    layout->addStretch(2);
    layout->addWidget(title);
    layout->addSpacing(10);
    layout->addWidget(formats);
    layout->addSpacing(18);
    layout->addLayout(buttons);
    layout->addSpacing(18);
    layout->addWidget(m_problem);
    layout->addStretch(3);
    layout->setContentsMargins(48, 24, 48, 24);
}

void EmptyState::showProblem(const QString &problem)
{
    m_problem->setText(problem.isEmpty() ? QString() : tr("Could not open it: %1").arg(problem));
    m_problem->setVisible(!problem.isEmpty());
}

QString EmptyState::problem() const
{
    return m_problem->text();
}

} // namespace peaklens::gui
