#pragma once
// The what-if bar: pick a checkpointing strategy (or toggle layers by hand) and read the
// predicted peak and step time against the measured baseline.

#include "core/plan/checkpointstrategy.h"

#include <QWidget>

#include <cstdint>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace peaklens::gui {

class WhatIfBar final : public QWidget
{
    Q_OBJECT

public:
    // A rule is one of CheckpointStrategy::presets(), given by rule().
    enum class Strategy { Custom, Rule, Budget, Overhead };

    explicit WhatIfBar(QWidget *parent = nullptr);

    // No cost model: the bar says why and disables itself.
    void setUnavailable(const QString &reason);
    void setBaseline(std::int64_t peakBytes, std::int64_t stepTimeNs);
    void showPrediction(std::int64_t peakBytes, std::int64_t stepTimeNs, bool feasible);
    // Toggling a layer by hand makes the strategy "custom" without re-planning.
    void markCustom();
    Strategy strategy() const;
    CheckpointStrategy rule() const; // with Strategy::Rule
    double budgetBytes() const;
    double overheadFraction() const;
    QString predictedPeakText() const;
    void focusStrategy();
    // Shows the strategy that set the toggles, without re-planning: its preset, or custom.
    void showStrategy(const CheckpointStrategy &strategy);

Q_SIGNALS:
    void strategyChanged();

private:
    QComboBox *m_strategy;
    QDoubleSpinBox *m_budget;
    QSpinBox *m_overhead;
    QLabel *m_baseline;
    QLabel *m_prediction;
    std::int64_t m_baselinePeak = 0;
    std::int64_t m_baselineTime = 0;
};

} // namespace peaklens::gui
