// SPDX-License-Identifier: Apache-2.0
#include "core/serialworker.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace peaklens;

class tst_SerialWorker : public QObject
{
    Q_OBJECT

private slots:
    // Each job runs on the worker's one thread, after the one before, and wait() returns
    // once the last has run.
    void jobsRunInTurnOnOneThread()
    {
        SerialWorker worker;
        std::vector<int> order;
        std::vector<std::thread::id> threads;
        for (int i = 0; i < 200; ++i) {
            worker.start([&, i] {
                order.push_back(i);
                threads.push_back(std::this_thread::get_id());
            });
            if (i % 3 == 0)
                worker.wait();
        }
        worker.wait();
        QCOMPARE(order.size(), std::size_t(200));
        for (int i = 0; i < 200; ++i)
            QCOMPARE(order[std::size_t(i)], i);
        for (const std::thread::id id : threads) {
            QVERIFY(id == threads.front());
            QVERIFY(id != std::this_thread::get_id());
        }
    }

    // What a job throws comes out of wait(), once; the worker goes on with the next job.
    void aFailureComesOutOfWait()
    {
        SerialWorker worker;
        worker.start([] { throw std::runtime_error("piece 3 is not JSON"); });
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, worker.wait());
        worker.wait(); // thrown once
        bool ran = false;
        worker.start([&] { ran = true; });
        worker.wait();
        QVERIFY(ran);
    }

    // runBeside returns once both sides are done, whichever throws: a job that writes into
    // the caller's frame is finished before that frame unwinds. The caller's failure is the
    // one told.
    void runBesideWaitsForBothSides_data()
    {
        QTest::addColumn<bool>("hereThrows");
        QTest::addColumn<bool>("jobThrows");
        QTest::addColumn<QString>("told"); // empty: nothing thrown
        QTest::addRow("neither throws") << false << false << QString();
        QTest::addRow("the job throws") << false << true << QStringLiteral("job");
        QTest::addRow("here throws") << true << false << QStringLiteral("here");
        QTest::addRow("both throw") << true << true << QStringLiteral("here");
    }

    void runBesideWaitsForBothSides()
    {
        QFETCH(bool, hereThrows);
        QFETCH(bool, jobThrows);
        QFETCH(QString, told);
        SerialWorker worker;
        bool jobDone = false;
        QString thrown;
        try {
            worker.runBeside(
                [&] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    jobDone = true;
                    if (jobThrows)
                        throw std::runtime_error("job");
                },
                [&] {
                    if (hereThrows)
                        throw std::runtime_error("here");
                });
        } catch (const std::runtime_error &error) {
            thrown = QString::fromLatin1(error.what());
        }
        QVERIFY(jobDone); // before runBeside returned or threw
        QCOMPARE(thrown, told);
        worker.wait(); // nothing left over
    }

    // The worker ends only once the job it is running has finished.
    void destructionWaitsForTheRunningJob()
    {
        std::atomic<bool> finished = false;
        {
            SerialWorker worker;
            worker.start([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                finished = true;
            });
        }
        QVERIFY(finished);
    }
};

QTEST_GUILESS_MAIN(tst_SerialWorker)
#include "tst_serialworker.moc"
