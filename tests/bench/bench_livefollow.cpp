// SPDX-License-Identifier: Apache-2.0
// How soon the app sees a commit of a trace being written: the test writer commits every N
// events with a pause after each and prints "committed N" at once; the app's LiveFollow
// polls the file. For each commit, the time from its line to the first status (the running
// figures: peak so far, step, phase) that holds its events, and to the first document (the
// views: timeline, tables) that does. Prints the median and the largest of each.
//
//   bench_livefollow IN [COMMIT_EVERY] [PAUSE_MS] [INTERVAL_MS]

#include "livefollow.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace peaklens::gui;

namespace {

struct Seen
{
    qint64 atMs;
    std::size_t events;
};

// Per commit, how long until something holding its events came.
std::vector<qint64> latencies(const std::vector<Seen> &commits, const std::vector<Seen> &arrivals)
{
    std::vector<qint64> result;
    for (const Seen &commit : commits) {
        const auto it =
            std::find_if(arrivals.begin(), arrivals.end(), [&](const Seen &arrival) { return arrival.events >= commit.events; });
        if (it != arrivals.end())
            result.push_back(std::max<qint64>(0, it->atMs - commit.atMs));
    }
    return result;
}

void print(const char *what, std::vector<qint64> values)
{
    if (values.empty()) {
        std::printf("%-32s none\n", what);
        return;
    }
    std::sort(values.begin(), values.end());
    std::printf("%-32s median %4lld ms, max %4lld ms over %zu commits\n", what, static_cast<long long>(values[values.size() / 2]),
                static_cast<long long>(values.back()), values.size());
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s IN [COMMIT_EVERY] [PAUSE_MS] [INTERVAL_MS]\n", argv[0]);
        return 2;
    }
    const QString commitEvery = QString::fromLocal8Bit(argc > 2 ? argv[2] : "1000");
    const QString pauseMs = QString::fromLocal8Bit(argc > 3 ? argv[3] : "200");
    const int intervalMs = argc > 4 ? std::atoi(argv[4]) : 250;
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("live.peaklens"));

    QElapsedTimer clock;
    clock.start();
    std::vector<Seen> commits, statuses, documents;
    QProcess writer;
    QObject::connect(&writer, &QProcess::readyReadStandardOutput, [&] {
        while (writer.canReadLine()) {
            const QByteArray line = writer.readLine().trimmed();
            if (line.startsWith("committed "))
                commits.push_back({clock.elapsed(), line.mid(10).toULongLong()});
        }
    });
    writer.start(QCoreApplication::applicationDirPath() + QStringLiteral("/peaklens-test-livewriter"),
                 {QString::fromLocal8Bit(argv[1]), out, QStringLiteral("--commit-every"), commitEvery,
                  QStringLiteral("--pause-ms"), pauseMs});
    while (!QFile::exists(out) && writer.state() != QProcess::NotRunning)
        writer.waitForReadyRead(5);

    LiveFollow live(out, intervalMs);
    QObject::connect(&live, &LiveFollow::statusChanged, [&](const LiveStatus &status) {
        statuses.push_back({clock.elapsed(), status.events});
    });
    QObject::connect(&live, &LiveFollow::documentReady, [&](const DocumentPtr &, const LiveStatus &status) {
        documents.push_back({clock.elapsed(), status.events});
    });
    QObject::connect(&live, &LiveFollow::ended, &app, &QCoreApplication::quit);
    QObject::connect(&live, &LiveFollow::failed, [&](const QString &message) {
        std::fprintf(stderr, "%s\n", qPrintable(message));
        QCoreApplication::exit(2);
    });
    const int code = app.exec();
    writer.waitForFinished();
    std::printf("%s: %zu events in %zu commits (a commit every %s events, %s ms apart), polled every %d ms\n", argv[1],
                commits.empty() ? std::size_t(0) : commits.back().events, commits.size(), qPrintable(commitEvery),
                qPrintable(pauseMs), intervalMs);
    print("commit to status line", latencies(commits, statuses));
    print("commit to views (document)", latencies(commits, documents));
    return code;
}
