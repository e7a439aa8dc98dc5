// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one owner of the open trace's checkpoint toggles: what the what-if predicts and a
// rerun runs. The layer table's boxes (LayerModel) and the what-if bar (WhatIfBar) show
// them; a tick, a strategy, a budget, an overhead or a run's toggles change them here, and
// predicted() gives the prediction of the new toggles.

#include "tracedocument.h"

#include "core/plan/checkpointschedule.h"
#include "core/plan/checkpointstrategy.h"

#include <QObject>
#include <QStringList>

#include <vector>

namespace peaklens::gui {

class LayerModel;
class WhatIfBar;

class WhatIfController final : public QObject
{
    Q_OBJECT

public:
    WhatIfController(LayerModel *layers, WhatIfBar *bar, QObject *parent = nullptr);

    // A new document: no toggles, or, `grown` (the same trace followed while written), the
    // toggles kept.
    void setDocument(const DocumentPtr &document, bool grown = false);
    // What the what-if predicts and a rerun runs: the ticked layers one by one, or the
    // units of the strategy or plan last applied (segments tick all their layers).
    const CheckpointSchedule &schedule() const { return m_schedule; }
    // The document the toggles are of.
    const DocumentPtr &document() const { return m_document; }
    // Ticks the units a strategy plans; nothing without a model. Throws Error for units
    // the chain does not have.
    void setStrategy(const CheckpointStrategy &strategy);
    // Ticks a plan's units (one the trade-offs view offers) and predicts them.
    void setSchedule(const CheckpointSchedule &schedule);

Q_SIGNALS:
    // The prediction of the toggles: its curve over the step (empty without toggles or
    // without a model) and the sentences `plan` prints of it, or why there is no what-if.
    void predicted(const std::vector<peaklens::SeriesPoint> &curve, const QStringList &notes);

private:
    void applyBarStrategy();
    // Ticks a schedule (a plan's) in the table without it counting as the user's ticks.
    void showSchedule(const CheckpointSchedule &schedule);
    void predict(bool feasible = true);

    LayerModel *m_layers;
    WhatIfBar *m_bar;
    DocumentPtr m_document;
    CheckpointSchedule m_schedule;
};

} // namespace peaklens::gui
