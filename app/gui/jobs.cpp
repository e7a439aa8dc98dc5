// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs.h"

#include <algorithm>

namespace peaklens::gui {

Jobs::Jobs(Keep keep, QObject *parent)
    : QObject(parent)
    , m_keep(keep)
{
}

Jobs::~Jobs()
{
    drop();
    waitForDone();
}

std::pair<quint64, std::shared_ptr<std::atomic<bool>>> Jobs::begin()
{
    const quint64 job = ++m_newest;
    if (m_keep == Keep::Newest) {
        for (const Running &running : m_running)
            running.cancel->store(true);
        m_firstKept = job;
    }
    return {job, std::make_shared<std::atomic<bool>>(false)};
}

void Jobs::drop()
{
    m_firstKept = m_newest + 1;
    for (const Running &running : m_running)
        running.cancel->store(true);
}

bool Jobs::isRunning() const
{
    return std::any_of(m_running.begin(), m_running.end(), [](const Running &running) { return !running.future.isFinished(); });
}

void Jobs::waitForDone()
{
    for (Running &running : m_running)
        running.future.waitForFinished();
    m_running.clear();
}

void Jobs::track(QFuture<void> future, std::shared_ptr<std::atomic<bool>> cancel)
{
    m_running.removeIf([](const Running &running) { return running.future.isFinished(); });
    m_running.append({std::move(future), std::move(cancel)});
}

} // namespace peaklens::gui
