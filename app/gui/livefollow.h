// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Follows a trace while its run writes it, for the window: a worker thread polls the file
// (TraceFollower) a few times a second and keeps its analyses up to date (GrowingAnalysis):
// the running figures the status line says, and the views' timeline and tables, handed
// over in a new document when they grew. One poll and one analysis run at a time, side by
// side, so the status line keeps up while a long trace is analysed; the UI thread never
// waits on the file. Stops by itself when the writer finishes or stops.

#include "jobs.h"
#include "tracedocument.h"

#include "core/format/tracefollower.h"

#include <QObject>
#include <QTimer>

#include <memory>
#include <optional>

namespace peaklens::gui {

struct LiveStatus
{
    TraceFollower::Writer writer = TraceFollower::Writer::Waiting;
    QString writerText;            // "peaklens-replay (pid 4242) is writing it"
    std::optional<long> writerPid; // when the writer runs on this machine
    std::size_t events = 0;        // memory events committed so far
    std::size_t completedSteps = 0;
    std::optional<std::int64_t> peakBytes; // the highest so far, on peakDevice
    QString peakDevice;
    std::optional<std::int64_t> step; // the step being recorded
    Phase phase = Phase::Other;
    QString layer; // the layer running now, empty outside any
    // A step whose peak came within kHeadroomMargin of the device's memory (deviceCapacity):
    // "step 7 peaked at 76.1 GiB, within 5 % of the device's 79.2 GiB; most held by blocks.3 (9.1 GiB)".
    QString headroomWarning;
    // With a warning and a cost model of the steps so far: the cheapest checkpoint set that
    // would give the margin back ("checkpointing blocks.0, blocks.2 (2 of 12 layers) would
    // keep it to ..."), and that set as a strategy, for a rerun.
    QString headroomAdvice;
    QString headroomStrategy;

    // "Live: peak so far 1.2 GiB on cuda:0 · step 7, backward of blocks.3 · 8,728 events",
    // and the warning (the advice is the window's to show beside it).
    QString text() const;
};

class LiveFollow final : public QObject
{
    Q_OBJECT

public:
    explicit LiveFollow(const QString &path, int intervalMs = 250, QObject *parent = nullptr);
    // Waits for a poll still running (a few milliseconds: it reads only what is new) and an
    // analysis (as long as analysing what was committed takes).
    ~LiveFollow() override;

    const QString &path() const { return m_path; }
    bool isFollowing() const { return !m_ended; }
    // The most recent figures.
    const LiveStatus &status() const { return m_status; }

Q_SIGNALS:
    // After every poll that found something new, or a change of the writer's state.
    void statusChanged(const peaklens::gui::LiveStatus &status);
    // What has been committed so far, analysed; the last one holds everything the writer
    // committed (and, when it finished, categories worked out over every event).
    void documentReady(const peaklens::gui::DocumentPtr &document, const peaklens::gui::LiveStatus &status);
    // The file turned out damaged or not a trace; following has stopped.
    void failed(const QString &message);
    // The writer finished or stopped; nothing more will come.
    void ended(const peaklens::gui::LiveStatus &status);

private:
    struct State;
    struct Tick
    {
        LiveStatus status;
        bool changed = false;
        std::shared_ptr<const Trace> snapshot; // what was committed, for a document
        std::optional<AnalysedTrace> analysed; // its analyses, while the writer writes
        TimelineSeries byLayer;
        bool complete = false; // nothing more will come
        bool unshown = false;  // rows no snapshot holds yet
        QString error;
    };
    struct Analysed
    {
        DocumentPtr document;
        QString advice, strategy; // see LiveStatus::headroomAdvice
        QString error;
    };
    static Tick poll(State &state, bool mayAnalyse);
    static Analysed analyse(const QString &path, Tick tick, bool wantsAdvice);
    void startPoll();
    void onPolled(const Tick &tick);
    void onAnalysed(const Analysed &analysed);
    void endIfDone();

    QString m_path;
    std::shared_ptr<State> m_state;
    QTimer m_timer;
    Jobs m_polls;
    Jobs m_analyses; // the views' document, beside the polls
    LiveStatus m_status;
    QString m_advice, m_strategy; // from the latest document, added to every status
    // Set when a poll or an analysis starts, cleared when its result has been taken: a
    // watcher's future stops running before its finished signal arrives.
    bool m_polling = false;
    bool m_analysing = false;
    bool m_complete = false; // the last poll found the writer finished or stopped
    bool m_unshown = false;  // it found rows that no snapshot holds yet
    bool m_ended = false;
};

} // namespace peaklens::gui
