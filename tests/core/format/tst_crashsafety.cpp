// SPDX-License-Identifier: Apache-2.0
#include "core/format/tracereader.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace peaklens;

class tst_CrashSafety : public QObject
{
    Q_OBJECT

private slots:
    void killedWriterLeavesEveryCommittedEvent()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("killed.peaklens"));
        // The writer commits on its own at least every second; wait for two commits.
        const auto killed = test::killAfterCommits(QStringLiteral("peaklens-test-streamwriter"), {path});
        QVERIFY2(killed.problem.isEmpty(), qPrintable(killed.problem));
        const quint64 committed = killed.committed;
        QVERIFY2(QFile::exists(path + QStringLiteral("-wal")), "the writer should have died mid-run");

        // Read in a private copy: not a file appears or goes beside the input.
        const QStringList before = QDir(dir.path()).entryList(QDir::Files);
        const auto trace = TraceReader::read(path.toStdString());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), before);
        QVERIFY(committed > 0);
        QVERIFY(trace->events.size() >= committed);
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            const MemoryEvent event = trace->events.at(i);
            if (event.timeNs != std::int64_t(i) || event.deltaBytes != std::int64_t(i + 1) || event.addr != i)
                QFAIL(qPrintable(QStringLiteral("event %1 did not survive intact").arg(i)));
        }
        QCOMPARE(trace->metaValue("source.format"), std::string("stream-test"));
    }
};

QTEST_GUILESS_MAIN(tst_CrashSafety)
#include "tst_crashsafety.moc"
