// SPDX-License-Identifier: GPL-3.0-or-later
#include "whatifcontroller.h"

#include "models/layermodel.h"
#include "widgets/whatifbar.h"

#include "core/plan/planner.h"
#include "core/plan/plannotes.h"
#include "core/trace/visibletext.h"

#include <optional>

namespace peaklens::gui {

namespace {

// Why there is no what-if, in the app's own terms rather than the command line's.
QString noModelText(const TraceDocument &document)
{
    if (document.trace->layers.empty())
        return WhatIfController::tr("the trace names no layers, so there is nothing to checkpoint");
    QString reason = QString::fromStdString(visibleText(document.modelProblem));
    const qsizetype hint = reason.indexOf(QLatin1String("; choose the chain"));
    if (hint >= 0)
        reason = reason.left(hint)
                 + WhatIfController::tr(". Right-click the layer that holds the blocks and choose "
                                        "\u201cPlan with its sub-layers as the chain\u201d.");
    return reason;
}

} // namespace

WhatIfController::WhatIfController(LayerModel *layers, WhatIfBar *bar, QObject *parent)
    : QObject(parent)
    , m_layers(layers)
    , m_bar(bar)
{
    connect(m_layers, &LayerModel::toggled, this, [this] {
        m_bar->markCustom();
        m_schedule = m_layers->schedule();
        predict();
    });
    connect(m_bar, &WhatIfBar::strategyChanged, this, &WhatIfController::applyBarStrategy);
}

void WhatIfController::setDocument(const DocumentPtr &document, bool grown)
{
    m_document = document;
    const CheckpointSchedule kept = grown ? m_schedule : CheckpointSchedule();
    m_layers->resetData(document); // clears the ticks
    if (!document || !document->model) {
        m_schedule.clear();
        if (document)
            m_bar->setUnavailable(noModelText(*document));
        Q_EMIT predicted({}, document ? QStringList{tr("No what-if: %1").arg(noModelText(*document))} : QStringList());
        return;
    }
    const Prediction baseline = peaklens::predict(*document->model, CheckpointSchedule{});
    m_bar->setBaseline(baseline.peakBytes, baseline.stepTimeNs, grown);
    showSchedule(kept);
    predict();
}

void WhatIfController::setStrategy(const CheckpointStrategy &strategy)
{
    if (!m_document || !m_document->model)
        return;
    showSchedule(planForStrategy(*m_document->model, strategy).schedule);
    m_bar->showStrategy(strategy);
    predict();
}

void WhatIfController::setSchedule(const CheckpointSchedule &schedule)
{
    if (!m_document || !m_document->model)
        return;
    showSchedule(schedule);
    m_bar->markCustom();
    predict();
}

void WhatIfController::applyBarStrategy()
{
    if (!m_document || !m_document->model)
        return;
    const CostModel &model = *m_document->model;
    std::optional<Plan> plan;
    PlannerOptions options;
    options.perOpPolicies = m_bar->perOpPolicies();
    options.offload = m_bar->offload();
    switch (m_bar->strategy()) {
    case WhatIfBar::Strategy::Custom:
        break;
    case WhatIfBar::Strategy::Rule:
        plan = planForStrategy(model, m_bar->rule());
        break;
    case WhatIfBar::Strategy::Budget:
        if (m_bar->budgetBytes() > 0)
            plan = planForBudget(model, static_cast<std::int64_t>(m_bar->budgetBytes()), options);
        break;
    case WhatIfBar::Strategy::Overhead:
        plan = planForOverhead(model, m_bar->overheadFraction(), options);
        break;
    }
    if (!plan)
        return;
    showSchedule(plan->schedule);
    predict(plan->feasible);
}

void WhatIfController::showSchedule(const CheckpointSchedule &schedule)
{
    m_schedule = schedule;
    m_layers->setSchedule(schedule);
}

void WhatIfController::predict(bool feasible)
{
    if (!m_document || !m_document->model)
        return;
    const CostModel &model = *m_document->model;
    const Prediction prediction = peaklens::predict(model, m_schedule);
    m_bar->showPrediction(prediction.peakBytes, prediction.stepTimeNs, feasible);
    // The sentences `plan` prints of the same prediction.
    QStringList notes;
    if (!feasible)
        notes << tr("No set of checkpoints fits the budget: this is the lowest peak the chain can reach.");
    for (const std::string &note : planNotes(model, m_schedule, prediction))
        notes << QString::fromStdString(note);
    Q_EMIT predicted(m_schedule.empty() ? std::vector<SeriesPoint>{} : predictCurve(model, m_schedule), notes);
}

} // namespace peaklens::gui
