// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Every background job of the app starts here: its work runs on the thread pool and what it
// gives comes back on the UI thread. A Jobs object keeps the jobs of one kind (a pane's
// query, a live poll, a report). Keeping the newest, starting one drops what older ones
// would give and asks them to stop (their Progress says cancelled); keeping every job (the
// document loader, whose callers wait for each ticket), each gives what it gives. drop(),
// when the session changes, drops and stops them all. A job's exception comes back as its
// message. The destructor waits for the work still running, so nothing a job reads is
// freed under it.

#include "core/progress.h"
#include "core/trace/visibletext.h"

#include <QFuture>
#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QString>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace peaklens::gui {

class Jobs : public QObject
{
    Q_OBJECT

public:
    enum class Keep { Newest, Every };

    explicit Jobs(Keep keep = Keep::Newest, QObject *parent = nullptr);
    ~Jobs() override;

    // Runs work(progress) on the thread pool; then, on this object's thread and unless it
    // was dropped, done(result), or failed(message) when the work threw.
    template<typename Work, typename Done>
    void start(Work work, Done done, std::function<void(const QString &)> failed = {});

    // What the jobs started so far would give is dropped; their work is asked to stop.
    void drop();
    // Whether a job's work is still running, a dropped one's included.
    bool isRunning() const;
    // Blocks until the work of every job started has ended.
    void waitForDone();

private:
    template<typename Result>
    struct Outcome
    {
        std::optional<Result> value;
        QString error; // what the work threw; empty when it gave a value or was cancelled
    };

    struct Running
    {
        QFuture<void> future;
        std::shared_ptr<std::atomic<bool>> cancel;
    };
    // A new job's number and cancel flag; older ones are dropped when only the newest is kept.
    std::pair<quint64, std::shared_ptr<std::atomic<bool>>> begin();
    void track(QFuture<void> future, std::shared_ptr<std::atomic<bool>> cancel);

    Keep m_keep;
    quint64 m_newest = 0;
    quint64 m_firstKept = 1; // jobs numbered below were dropped
    QList<Running> m_running;
};

template<typename Work, typename Done>
void Jobs::start(Work work, Done done, std::function<void(const QString &)> failed)
{
    using Result = std::decay_t<std::invoke_result_t<Work &, const Progress &>>;
    const auto started = begin();
    const quint64 job = started.first;
    const std::shared_ptr<std::atomic<bool>> cancel = started.second;
    QFuture<Outcome<Result>> future = QtConcurrent::run([work = std::move(work), cancel]() mutable -> Outcome<Result> {
        try {
            return {work(Progress{nullptr, cancel.get()}), QString()};
        } catch (const Cancelled &) {
            return {};
        } catch (const std::exception &error) {
            return {std::nullopt, QString::fromStdString(visibleText(error.what()))};
        }
    });
    track(QFuture<void>(future), cancel);
    auto *watcher = new QFutureWatcher<Outcome<Result>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, job, done = std::move(done), failed = std::move(failed)]() mutable {
                watcher->deleteLater();
                if (job < m_firstKept)
                    return;
                Outcome<Result> outcome = watcher->result();
                if (outcome.value)
                    done(std::move(*outcome.value));
                else if (!outcome.error.isEmpty() && failed)
                    failed(outcome.error);
            });
    watcher->setFuture(future);
}

} // namespace peaklens::gui
