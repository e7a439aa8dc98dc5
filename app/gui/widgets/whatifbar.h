#pragma once
// The what-if bar: pick a checkpointing strategy (or toggle layers by hand) and read the
// predicted peak and step time against the measured baseline.

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
    enum class Strategy { Custom, None, All, Every2, Every3, SquareRoot, Budget, Overhead };

    explicit WhatIfBar(QWidget *parent = nullptr);

    // No cost model: the bar says why and disables itself.
    void setUnavailable(const QString &reason);
    void setBaseline(std::int64_t peakBytes, std::int64_t stepTimeNs);
    void showPrediction(std::int64_t peakBytes, std::int64_t stepTimeNs, bool feasible);
    // Toggling a layer by hand makes the strategy "custom" without re-planning.
    void markCustom();
    Strategy strategy() const;
    double budgetBytes() const;
    double overheadFraction() const;
    QString predictedPeakText() const;
    void focusStrategy();
    // Shows the strategy (none, all, every:2, every:3, sqrt) that set the toggles, without re-planning.
    void showStrategyName(const QString &strategy);

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
