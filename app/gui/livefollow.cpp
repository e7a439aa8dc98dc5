// SPDX-License-Identifier: GPL-3.0-or-later
#include "livefollow.h"

#include "core/document/growinganalysis.h"
#include "core/error.h"
#include "core/plan/headroom.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

namespace peaklens::gui {

QString LiveStatus::text() const
{
    const auto q = [](const std::string &text) { return QString::fromStdString(text); };
    QString line;
    switch (writer) {
    case TraceFollower::Writer::Waiting:
        line = QObject::tr("Live: waiting for the first commit");
        break;
    case TraceFollower::Writer::Writing:
        line = QObject::tr("Live");
        break;
    case TraceFollower::Writer::Finished:
        line = QObject::tr("Finished");
        break;
    case TraceFollower::Writer::Stopped:
        line = QObject::tr("The writer stopped without finishing");
        break;
    }
    if (peakBytes)
        line += QObject::tr(": peak so far %1 on %2").arg(q(formatBytes(*peakBytes)), peakDevice);
    if (step && writer == TraceFollower::Writer::Writing) {
        line += QObject::tr(" · step %1").arg(*step);
        if (phase != Phase::Other)
            line += QStringLiteral(", ") + q(std::string(phaseName(phase)));
        if (!layer.isEmpty())
            line += QObject::tr(" of %1").arg(layer);
    }
    const auto count = [&](std::size_t n, const char *noun) {
        return q(formatCount(static_cast<std::int64_t>(n)) + " " + noun + (n == 1 ? "" : "s"));
    };
    line += QStringLiteral(" · ") + count(events, "memory event") + QStringLiteral(", ") + count(completedSteps, "step")
            + QStringLiteral(" done");
    if (!headroomWarning.isEmpty())
        line += QStringLiteral(" — ⚠ ") + headroomWarning;
    return line;
}

namespace {

// The most recent step that came within the margin of the device's memory, said in a line.
QString headroomWarning(const Trace &trace, const LiveAnalysis &analysis)
{
    const auto capacity = deviceCapacity(trace);
    if (!capacity)
        return {};
    const auto &steps = analysis.steps();
    const auto near = std::find_if(steps.rbegin(), steps.rend(), [&](const LiveAnalysis::StepFigures &step) {
        return nearCapacity(step.peakBytes, *capacity, kHeadroomMargin);
    });
    if (near == steps.rend())
        return {};
    QString text = QObject::tr("step %1 peaked at %2, within %3 % of the device's %4")
                       .arg(near->step.number)
                       .arg(QString::fromStdString(formatBytes(near->peakBytes)))
                       .arg(kHeadroomMargin * 100)
                       .arg(QString::fromStdString(formatBytes(*capacity)));
    if (near->topLayerBytes > 0 && near->topLayer < trace.layers.size())
        text += QObject::tr("; most held by %1 (%2)")
                    .arg(QString::fromStdString(visibleText(trace.layers[near->topLayer].path)),
                         QString::fromStdString(formatBytes(near->topLayerBytes)));
    return text;
}

} // namespace

struct LiveFollow::State
{
    explicit State(const QString &path)
        : follower(path.toStdString())
    {
    }

    TraceFollower follower;
    GrowingAnalysis analysis; // the status line's figures (live()) and the views'

    bool analysedComplete = false; // the figures were taken with every step complete
    bool unshown = false;          // rows came since the last snapshot
    bool advised = false;          // a snapshot was taken with a warning, for its advice
};

LiveFollow::LiveFollow(const QString &path, int intervalMs, QObject *parent)
    : QObject(parent)
    , m_path(path)
    , m_state(std::make_shared<State>(path))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &LiveFollow::startPoll);
    startPoll();
}

LiveFollow::~LiveFollow()
{
    m_timer.stop();
    m_polls.waitForDone();
    m_analyses.waitForDone();
}

void LiveFollow::startPoll()
{
    m_polling = true;
    m_polls.start([state = m_state, mayAnalyse = !m_analysing](const Progress &) { return poll(*state, mayAnalyse); },
                  [this](const Tick &tick) { onPolled(tick); });
}

LiveFollow::Tick LiveFollow::poll(State &state, bool mayAnalyse)
{
    Tick tick;
    try {
        const TraceFollower::Writer before = state.follower.writer();
        const TraceFollower::Update update = state.follower.poll();
        const Trace &trace = state.follower.trace();
        tick.complete = !state.follower.isLive();
        if (update.changedAnything() || (tick.complete && !state.analysedComplete)) {
            state.analysis.update(trace, state.follower.growth(update));
            state.analysedComplete = tick.complete;
        }
        tick.changed = update.changedAnything() || state.follower.writer() != before;
        state.unshown = state.unshown || update.changedAnything();

        LiveStatus &status = tick.status;
        status.writer = state.follower.writer();
        status.writerText = QString::fromStdString(state.follower.writerText());
        status.writerPid = state.follower.localWriterPid();
        status.events = trace.events.size();
        const LiveAnalysis &live = state.analysis.live();
        status.completedSteps = live.steps().size();
        if (const auto primary = live.primary()) {
            const DevicePeak &peak = live.peaks()[*primary];
            status.peakBytes = peak.allocatedBytes;
            status.peakDevice = QString::fromStdString(peak.device.toString());
        }
        status.step = live.currentStep();
        status.phase = live.currentPhase();
        if (const std::uint32_t layer = live.currentLayer(); layer != kNoLayer && layer < trace.layers.size())
            status.layer = QString::fromStdString(visibleText(trace.layers[layer].path));
        status.headroomWarning = headroomWarning(trace, live);

        // The views read a document of their own, of what was committed so far: a copy of
        // the trace with the analyses kept up to date, completed beside the next polls (once
        // the writer is done, the whole trace is analysed as a plain open does); a first
        // warning asks for one too, for its advice.
        const bool wantsAdvice = !status.headroomWarning.isEmpty() && !state.advised;
        if (mayAnalyse && (state.unshown || wantsAdvice) && !trace.events.empty()) {
            tick.snapshot = std::make_shared<const Trace>(trace);
            if (!tick.complete) {
                tick.analysed = state.analysis.analysed(tick.snapshot);
                tick.byLayer = state.analysis.byLayer();
            }
            state.unshown = false;
            state.advised = state.advised || !status.headroomWarning.isEmpty();
        }
        tick.unshown = state.unshown;
    } catch (const Error &error) {
        tick.error = QString::fromStdString(error.what());
    }
    return tick;
}

LiveFollow::Analysed LiveFollow::analyse(const QString &path, Tick tick, bool wantsAdvice)
{
    Analysed analysed;
    try {
        analysed.document = tick.analysed ? completeDocument(path, std::move(*tick.analysed), std::move(tick.byLayer))
                                          : analyseDocument(path, std::move(tick.snapshot));
    } catch (const Error &error) {
        analysed.error = QString::fromStdString(error.what());
        return analysed;
    }
    // The planner on the model of what was recorded so far: milliseconds beside the analysis.
    const auto capacity = deviceCapacity(*analysed.document->trace);
    if (wantsAdvice && capacity && analysed.document->model) {
        const CostModel &model = *analysed.document->model;
        const HeadroomAdvice advice = adviseHeadroom(model, *capacity, kHeadroomMargin);
        analysed.advice = QString::fromStdString(visibleText(advice.sentence(model)));
        if (advice.plan.feasible && !advice.plan.schedule.empty())
            analysed.strategy = QString::fromStdString(advice.strategy);
    }
    return analysed;
}

void LiveFollow::onPolled(const Tick &tick)
{
    m_polling = false;
    if (!tick.error.isEmpty()) {
        m_analyses.waitForDone();
        m_ended = true;
        Q_EMIT failed(tick.error);
        return;
    }
    m_status = tick.status;
    m_status.headroomAdvice = m_advice;
    m_status.headroomStrategy = m_strategy;
    if (tick.changed)
        Q_EMIT statusChanged(m_status);
    if (tick.snapshot) {
        m_analysing = true;
        m_analyses.start([path = m_path, tick, wantsAdvice = !tick.status.headroomWarning.isEmpty()](
                             const Progress &) { return analyse(path, tick, wantsAdvice); },
                         [this](const Analysed &analysed) { onAnalysed(analysed); });
    }
    m_complete = tick.complete;
    m_unshown = tick.unshown;
    if (!m_complete)
        m_timer.start();
    else if (m_unshown && !m_analysing)
        startPoll(); // the analysis that kept the last rows from a snapshot has finished
    endIfDone();
}

void LiveFollow::onAnalysed(const Analysed &analysed)
{
    m_analysing = false;
    if (m_ended)
        return; // a poll failed meanwhile
    if (!analysed.document) {
        m_timer.stop();
        m_ended = true;
        Q_EMIT failed(analysed.error);
        return;
    }
    if (!analysed.advice.isEmpty()) {
        m_advice = m_status.headroomAdvice = analysed.advice;
        m_strategy = m_status.headroomStrategy = analysed.strategy;
    }
    Q_EMIT documentReady(analysed.document, m_status);
    if (m_complete && m_unshown && !m_polling)
        startPoll(); // the last rows came while this analysis ran
    endIfDone();
}

void LiveFollow::endIfDone()
{
    if (m_ended || !m_complete || m_unshown || m_analysing || m_polling || m_timer.isActive())
        return;
    m_ended = true;
    Q_EMIT ended(m_status);
}

} // namespace peaklens::gui
