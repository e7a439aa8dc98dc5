// SPDX-License-Identifier: GPL-3.0-or-later
// The app's background jobs: the newest of a kind wins and the older are asked to stop, a
// loader's every job reports, an exception comes back as its message, drop() and the
// destructor leave nothing running.
#include "jobs.h"

#include "core/error.h"

#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

// Work that waits for `gate` (or its cancellation), then gives `value`.
auto gated(QSemaphore &gate, int value, std::atomic<bool> *sawCancel = nullptr)
{
    return [&gate, value, sawCancel](const Progress &progress) {
        while (!gate.tryAcquire(1, 5)) {
            if (progress.isCancelled()) {
                if (sawCancel)
                    sawCancel->store(true);
                progress.throwIfCancelled();
            }
        }
        return value;
    };
}

} // namespace

class tst_Jobs : public QObject
{
    Q_OBJECT

private slots:
    void theNewestWinsAndTheOlderStop()
    {
        Jobs jobs;
        QSemaphore first, second;
        std::atomic<bool> firstCancelled{false};
        QList<int> given;
        jobs.start(gated(first, 1, &firstCancelled), [&](int value) { given << value; });
        jobs.start(gated(second, 2), [&](int value) { given << value; });
        QTRY_VERIFY(firstCancelled.load());
        second.release();
        QTRY_COMPARE(given, QList<int>{2});
        QTRY_VERIFY(!jobs.isRunning());
        QTest::qWait(20);
        QCOMPARE(given, QList<int>{2});
    }

    void everyJobReportsWhenAllAreKept()
    {
        Jobs jobs(Jobs::Keep::Every);
        QSemaphore gate;
        QList<int> given;
        jobs.start(gated(gate, 1), [&](int value) { given << value; });
        jobs.start(gated(gate, 2), [&](int value) { given << value; });
        gate.release(2);
        QTRY_COMPARE(given.size(), 2);
        std::sort(given.begin(), given.end());
        QCOMPARE(given, (QList<int>{1, 2}));
    }

    void anExceptionComesBackAsItsMessage()
    {
        Jobs jobs;
        QString message;
        bool done = false;
        jobs.start([](const Progress &) -> int { throw FileError("/data/run.peaklens", "is damaged."); },
                   [&](int) { done = true; }, [&](const QString &text) { message = text; });
        QTRY_VERIFY(!message.isEmpty());
        QVERIFY(!done);
        QVERIFY2(message.contains(QStringLiteral("/data/run.peaklens")), qPrintable(message));
    }

    void dropStopsAndSilencesEveryJob()
    {
        Jobs jobs(Jobs::Keep::Every);
        QSemaphore gate;
        std::atomic<bool> cancelled{false};
        bool given = false;
        jobs.start(gated(gate, 1, &cancelled), [&](int) { given = true; });
        QVERIFY(jobs.isRunning());
        jobs.drop();
        jobs.waitForDone();
        QVERIFY(cancelled.load());
        QVERIFY(!jobs.isRunning());
        QTest::qWait(20);
        QVERIFY(!given);
    }

    void theDestructorWaitsForTheWork()
    {
        std::atomic<bool> ended{false};
        {
            Jobs jobs;
            jobs.start(
                [&ended](const Progress &) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    ended.store(true);
                    return 0;
                },
                [](int) {});
        }
        QVERIFY(ended.load());
    }
};

QTEST_GUILESS_MAIN(tst_Jobs)
#include "tst_jobs.moc"
