// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The what-if bar: pick a checkpointing strategy (or toggle layers by hand) and read the
// predicted peak and step time against the measured baseline.

#include "core/plan/checkpointstrategy.h"

#include <QWidget>

#include <cstdint>

class QAction;
class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace peaklens::gui {

class WhatIfBar final : public QWidget
{
    Q_OBJECT

public:
    // A rule is one of CheckpointStrategy::presets(), given by rule().
    enum class Strategy { Custom, Rule, Budget, Overhead };

    explicit WhatIfBar(QWidget *parent = nullptr);

    // The action that reruns with the toggles, as a button beside the strategy, where a long
    // prediction cannot push it out of sight.
    void setRerunAction(QAction *action);
    // No cost model: the bar says why, goes back to no toggles and disables itself.
    void setUnavailable(const QString &reason);
    // What the trace measured without toggles; the strategy goes back to none unless
    // `keepStrategy` (the same trace grown while it is followed).
    void setBaseline(std::int64_t peakBytes, std::int64_t stepTimeNs, bool keepStrategy = false);
    void showPrediction(std::int64_t peakBytes, std::int64_t stepTimeNs, bool feasible);
    // Toggling a layer by hand makes the strategy "custom" without re-planning.
    void markCustom();
    Strategy strategy() const;
    CheckpointStrategy rule() const; // with Strategy::Rule
    // The budget as typed: "6 GiB", "512MiB", "6.5 GB"; 0 while it is not a size.
    double budgetBytes() const;
    double overheadFraction() const;
    // With a budget or an overhead: whether the planner also weighs per-op policies, and
    // offloading layers to host memory.
    bool perOpPolicies() const;
    bool offload() const;
    QString predictedPeakText() const;
    void focusStrategy();
    // Chooses "Cheapest within budget" with `budget` typed in, as a user would: plans.
    void chooseBudget(const QString &budget);
    // Shows the strategy that set the toggles, without re-planning: its preset, or custom.
    void showStrategy(const CheckpointStrategy &strategy);

Q_SIGNALS:
    void strategyChanged();

private:
    QComboBox *m_strategy;
    QLineEdit *m_budget;
    QSpinBox *m_overhead;
    QCheckBox *m_perOp;
    QCheckBox *m_offload;
    QLabel *m_baseline;
    QLabel *m_prediction;
    QHBoxLayout *m_rerunSlot = nullptr;
    std::int64_t m_baselinePeak = 0;
    std::int64_t m_baselineTime = 0;
};

} // namespace peaklens::gui
