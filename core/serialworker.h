// SPDX-License-Identifier: Apache-2.0
#pragma once
// One thread that runs the jobs handed to it one at a time, for as long as it lives: for
// work handed over hundreds of times a second (a big file's pieces, parsed while the piece
// before is read), where starting a thread per job would cost more than some jobs take.

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace peaklens {

class SerialWorker
{
public:
    SerialWorker()
        : m_thread([this] { run(); })
    {
    }

    // Waits for the job running, if any, then ends the thread.
    ~SerialWorker()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }

    SerialWorker(const SerialWorker &) = delete;
    SerialWorker &operator=(const SerialWorker &) = delete;

    // Runs `job` on the worker once the job before is done (what that one threw is dropped:
    // wait() for it first to see it).
    void start(std::function<void()> job)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return !m_busy; });
        m_failure = nullptr;
        m_job = std::move(job);
        m_busy = true;
        m_changed.notify_all();
    }

    // Waits for the job started last; throws what it threw.
    void wait()
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return !m_busy; });
        if (m_failure)
            std::rethrow_exception(std::exchange(m_failure, nullptr));
    }

    // Runs `job` on the worker while `here` runs on the calling thread, and returns once
    // both have: a job may then write into the caller's frame. What `here` threw comes
    // out, else what `job` threw.
    template<typename Here>
    void runBeside(std::function<void()> job, Here &&here)
    {
        start(std::move(job));
        try {
            here();
        } catch (...) {
            try {
                wait();
            } catch (...) { // `here`'s is the one told
            }
            throw;
        }
        wait();
    }

private:
    void run()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [this] { return m_stopping || m_busy; });
            if (!m_busy)
                return;
            const std::function<void()> job = std::exchange(m_job, nullptr);
            lock.unlock();
            std::exception_ptr failure;
            try {
                job();
            } catch (...) {
                failure = std::current_exception();
            }
            lock.lock();
            m_failure = failure;
            m_busy = false;
            m_changed.notify_all();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::function<void()> m_job;
    bool m_busy = false;
    bool m_stopping = false;
    std::exception_ptr m_failure;
    std::thread m_thread; // last: started once the rest is ready
};

} // namespace peaklens
