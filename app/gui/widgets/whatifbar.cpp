// SPDX-License-Identifier: GPL-3.0-or-later
#include "whatifbar.h"

#include "core/plan/steptimecomparison.h"
#include "core/trace/units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPoint>
#include <QToolButton>

#include <QSignalBlocker>
#include <QSpinBox>
#include <algorithm>

namespace peaklens::gui {

namespace {

QString bytesText(std::int64_t bytes)
{
    return QString::fromStdString(formatBytes(bytes));
}

QString millisecondsText(std::int64_t ns)
{
    return QString::number(static_cast<double>(ns) / 1e6, 'f', 1) + QStringLiteral(" ms");
}

QString deltaText(std::int64_t value, std::int64_t base)
{
    if (base == 0)
        return {};
    // The figure the Runs table repeats for a rerun of these toggles.
    const double percent = 100.0 * static_cast<double>(value - base) / static_cast<double>(base);
    return QStringLiteral(" (%1)").arg(QString::fromStdString(signedPercentText(percent)));
}

} // namespace

WhatIfBar::WhatIfBar(QWidget *parent)
    : QWidget(parent)
    , m_strategy(new QComboBox(this))
    , m_budget(new QLineEdit(this))
    , m_overhead(new QSpinBox(this))
    , m_perOp(new QCheckBox(tr("Per-op"), this))
    , m_offload(new QCheckBox(tr("Offload"), this))
    , m_baseline(new QLabel(this))
    , m_prediction(new QLabel(this))
{
    // Item data: the Strategy, and for rules the index into CheckpointStrategy::presets().
    m_strategy->addItem(tr("Custom toggles"), QPoint(int(Strategy::Custom), 0));
    const auto &presets = CheckpointStrategy::presets();
    for (std::size_t i = 0; i < presets.size(); ++i)
        m_strategy->addItem(QString::fromStdString(presets[i].label()), QPoint(int(Strategy::Rule), int(i)));
    m_strategy->addItem(tr("Cheapest within budget"), QPoint(int(Strategy::Budget), 0));
    m_strategy->addItem(tr("Lowest peak within overhead"), QPoint(int(Strategy::Overhead), 0));
    m_strategy->setToolTip(tr("Which layers to checkpoint (Ctrl+Shift+S)"));
    m_budget->setObjectName(QStringLiteral("budget"));
    m_budget->setToolTip(tr("Memory budget for the planner, in any unit: 6 GiB, 512 MiB, 6.5 GB"));
    m_budget->setMaximumWidth(m_budget->fontMetrics().horizontalAdvance(QStringLiteral("0000.00 MiB")) + 16);
    m_overhead->setRange(0, 1000);
    m_overhead->setValue(20);
    m_overhead->setSuffix(QStringLiteral(" %"));
    m_overhead->setToolTip(tr("Step time the planner may add"));
    m_perOp->setObjectName(QStringLiteral("perOp"));
    m_perOp->setToolTip(tr("Let the planner also checkpoint a layer with a per-op policy: the outputs of its "
                           "costliest operators kept, the rest recomputed"));
    m_offload->setObjectName(QStringLiteral("offload"));
    m_offload->setToolTip(tr("Let the planner also offload what a layer keeps for backward to host memory: no "
                             "recompute, the copies out and back timed at 25 GB/s"));
    QFont bold = m_prediction->font();
    bold.setBold(true);
    m_prediction->setFont(bold);
    m_prediction->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long prediction gives way (in full in its tooltip) instead of pushing the bar's
    // buttons into the toolbar's overflow menu.
    for (QLabel *label : {m_baseline, m_prediction}) {
        label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        label->setMinimumWidth(label->fontMetrics().horizontalAdvance(QStringLiteral("Predicted: peak 000.0 MiB")));
    }

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(new QLabel(tr("Checkpoint:"), this));
    layout->addWidget(m_strategy);
    layout->addWidget(m_budget);
    layout->addWidget(m_overhead);
    layout->addWidget(m_perOp);
    layout->addWidget(m_offload);
    m_rerunSlot = new QHBoxLayout;
    layout->addLayout(m_rerunSlot);
    layout->addSpacing(16);
    layout->addWidget(m_baseline, 2);
    layout->addSpacing(16);
    layout->addWidget(m_prediction, 3);

    auto update = [this] {
        m_budget->setVisible(strategy() == Strategy::Budget);
        m_overhead->setVisible(strategy() == Strategy::Overhead);
        const bool planning = strategy() == Strategy::Budget || strategy() == Strategy::Overhead;
        m_perOp->setVisible(planning);
        m_offload->setVisible(planning);
    };
    update();
    connect(m_strategy, &QComboBox::currentIndexChanged, this, [this, update] {
        update();
        Q_EMIT strategyChanged();
    });
    connect(m_budget, &QLineEdit::editingFinished, this, [this] {
        if (budgetBytes() > 0) {
            m_budget->setText(bytesText(static_cast<std::int64_t>(budgetBytes())));
            Q_EMIT strategyChanged();
        }
    });
    connect(m_budget, &QLineEdit::textChanged, this,
            [this] { m_budget->setStyleSheet(budgetBytes() > 0 ? QString() : QStringLiteral("color: #b42318")); });
    connect(m_overhead, &QSpinBox::valueChanged, this, &WhatIfBar::strategyChanged);
    connect(m_perOp, &QCheckBox::toggled, this, &WhatIfBar::strategyChanged);
    connect(m_offload, &QCheckBox::toggled, this, &WhatIfBar::strategyChanged);
}

bool WhatIfBar::perOpPolicies() const
{
    return m_perOp->isChecked();
}

bool WhatIfBar::offload() const
{
    return m_offload->isChecked();
}

void WhatIfBar::chooseBudget(const QString &budget)
{
    m_budget->setText(budget);
    const int budgetItem = m_strategy->findData(QPoint(int(Strategy::Budget), 0));
    if (m_strategy->currentIndex() == budgetItem)
        Q_EMIT m_budget->editingFinished();
    else
        m_strategy->setCurrentIndex(budgetItem);
}

void WhatIfBar::setRerunAction(QAction *action)
{
    auto *button = new QToolButton(this);
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_rerunSlot->addWidget(button);
}

void WhatIfBar::setUnavailable(const QString &reason)
{
    {
        const QSignalBlocker blocker(this);
        showStrategy(CheckpointStrategy());
    }
    m_budget->setVisible(false);
    m_overhead->setVisible(false);
    m_baselinePeak = m_baselineTime = 0;
    setEnabled(false);
    m_baseline->clear();
    // The reason in full is the window's to show (over the timeline, wrapped).
    m_prediction->setText(tr("No what-if"));
    m_prediction->setToolTip(reason);
}

void WhatIfBar::setBaseline(std::int64_t peakBytes, std::int64_t stepTimeNs, bool keepStrategy)
{
    setEnabled(true);
    m_baselinePeak = peakBytes;
    m_baselineTime = stepTimeNs;
    if (!keepStrategy) {
        const QSignalBlocker blocker(this);
        showStrategy(CheckpointStrategy());
        m_budget->setText(bytesText(peakBytes * 3 / 4));
    }
    m_baseline->setText(tr("Measured: peak %1, step %2").arg(bytesText(peakBytes), millisecondsText(stepTimeNs)));
    m_baseline->setToolTip(m_baseline->text());
}

void WhatIfBar::showPrediction(std::int64_t peakBytes, std::int64_t stepTimeNs, bool feasible)
{
    QString text = tr("Predicted: peak %1%2, step %3%4")
                       .arg(bytesText(peakBytes), deltaText(peakBytes, m_baselinePeak), millisecondsText(stepTimeNs),
                            deltaText(stepTimeNs, m_baselineTime));
    if (!feasible)
        text += tr(" (lowest reachable)");
    m_prediction->setText(text);
    m_prediction->setToolTip(text);
}

void WhatIfBar::markCustom()
{
    const QSignalBlocker blocker(m_strategy);
    m_strategy->setCurrentIndex(m_strategy->findData(QPoint(int(Strategy::Custom), 0)));
    m_budget->setVisible(false);
    m_overhead->setVisible(false);
}

WhatIfBar::Strategy WhatIfBar::strategy() const
{
    return static_cast<Strategy>(m_strategy->currentData().toPoint().x());
}

CheckpointStrategy WhatIfBar::rule() const
{
    const auto &presets = CheckpointStrategy::presets();
    const int index = m_strategy->currentData().toPoint().y();
    return strategy() == Strategy::Rule && index < int(presets.size()) ? presets[std::size_t(index)] : CheckpointStrategy();
}

double WhatIfBar::budgetBytes() const
{
    const auto bytes = parseBytes(m_budget->text().toStdString());
    return bytes && *bytes > 0 ? static_cast<double>(*bytes) : 0.0;
}

double WhatIfBar::overheadFraction() const
{
    return m_overhead->value() / 100.0;
}

void WhatIfBar::showStrategy(const CheckpointStrategy &strategy)
{
    const auto &presets = CheckpointStrategy::presets();
    const auto found = std::find(presets.begin(), presets.end(), strategy);
    const QPoint shown =
        found == presets.end() ? QPoint(int(Strategy::Custom), 0) : QPoint(int(Strategy::Rule), int(found - presets.begin()));
    const QSignalBlocker blocker(m_strategy);
    m_strategy->setCurrentIndex(m_strategy->findData(shown));
}

void WhatIfBar::focusStrategy()
{
    m_strategy->setFocus();
    m_strategy->showPopup();
}

QString WhatIfBar::predictedPeakText() const
{
    return m_prediction->text();
}

} // namespace peaklens::gui
