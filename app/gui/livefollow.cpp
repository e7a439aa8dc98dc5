#include "livefollow.h"

#include "core/analysis/liveanalysis.h"
#include "core/error.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <QtConcurrent/QtConcurrentRun>

namespace peaklens::gui {

QString LiveStatus::text() const
{
    const auto q = [](const std::string &text) { return QString::fromStdString(text); };
    QString line;
    switch (writer) {
    case TraceFollower::Writer::Waiting: line = QObject::tr("Live: waiting for the first commit"); break;
    case TraceFollower::Writer::Writing: line = QObject::tr("Live"); break;
    case TraceFollower::Writer::Finished: line = QObject::tr("Finished"); break;
    case TraceFollower::Writer::Stopped: line = QObject::tr("The writer stopped without finishing"); break;
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
    return line + QStringLiteral(" · ") + count(events, "memory event") + QStringLiteral(", ")
           + count(completedSteps, "step") + QStringLiteral(" done");
}

struct LiveFollow::State
{
    explicit State(const QString &path)
        : path(path)
        , follower(path.toStdString())
    {
    }

    QString path;
    TraceFollower follower;
    LiveAnalysis analysis;
    bool analysedComplete = false; // the figures were taken with every step complete
    bool documentComplete = false; // the last document holds what the finished writer left
};

LiveFollow::LiveFollow(const QString &path, int intervalMs, QObject *parent)
    : QObject(parent)
    , m_path(path)
    , m_state(std::make_shared<State>(path))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        m_watcher.setFuture(QtConcurrent::run([state = m_state] { return poll(*state); }));
    });
    connect(&m_watcher, &QFutureWatcher<Tick>::finished, this, &LiveFollow::onPolled);
    m_watcher.setFuture(QtConcurrent::run([state = m_state] { return poll(*state); }));
}

LiveFollow::~LiveFollow()
{
    m_timer.stop();
    m_watcher.waitForFinished();
}

LiveFollow::Tick LiveFollow::poll(State &state)
{
    Tick tick;
    try {
        const TraceFollower::Writer before = state.follower.writer();
        const TraceFollower::Update update = state.follower.poll();
        const Trace &trace = state.follower.trace();
        const bool complete = !state.follower.isLive();
        if (update.changedAnything() || (complete && !state.analysedComplete)) {
            state.analysis.update(trace, update.eventsFrom, update.reordered || update.recategorized, complete);
            state.analysedComplete = complete;
        }
        tick.changed = update.changedAnything() || state.follower.writer() != before;

        LiveStatus &status = tick.status;
        status.writer = state.follower.writer();
        status.writerText = QString::fromStdString(state.follower.writerText());
        status.events = trace.events.size();
        status.completedSteps = state.analysis.steps().size();
        if (const auto primary = state.analysis.primary()) {
            const DevicePeak &peak = state.analysis.peaks()[*primary];
            status.peakBytes = peak.allocatedBytes;
            status.peakDevice = QString::fromStdString(peak.device.toString());
        }
        status.step = state.analysis.currentStep();
        status.phase = state.analysis.currentPhase();
        if (const std::uint32_t layer = state.analysis.currentLayer(); layer != kNoLayer && layer < trace.layers.size())
            status.layer = QString::fromStdString(visibleText(trace.layers[layer].path));

        // The views read a document of their own: what was committed so far, analysed whole.
        if (!trace.events.empty() && (update.changedAnything() || (complete && !state.documentComplete))) {
            tick.document = analyseDocument(state.path, std::make_shared<const Trace>(trace));
            state.documentComplete = complete;
        }
    } catch (const Error &error) {
        tick.error = QString::fromStdString(error.what());
    }
    return tick;
}

void LiveFollow::onPolled()
{
    const Tick tick = m_watcher.result();
    if (!tick.error.isEmpty()) {
        Q_EMIT failed(tick.error);
        return;
    }
    m_status = tick.status;
    if (tick.changed)
        Q_EMIT statusChanged(m_status);
    if (tick.document)
        Q_EMIT documentReady(tick.document, m_status);
    if (m_status.writer == TraceFollower::Writer::Finished || m_status.writer == TraceFollower::Writer::Stopped) {
        Q_EMIT ended(m_status);
        return;
    }
    m_timer.start();
}

} // namespace peaklens::gui
