#include "testsupport.h"
#include "core/format/tracereader.h"

#include <QFile>
#include <QProcess>
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
        QProcess writer;
        writer.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-test-streamwriter"), {path});
        QVERIFY(writer.waitForStarted());

        // The writer commits on its own at least every second; wait for two commits.
        quint64 committed = 0;
        int commits = 0;
        while (commits < 2) {
            QVERIFY2(writer.waitForReadyRead(10000), "the writer reported no commit within 10 s");
            while (writer.canReadLine()) {
                const QByteArray line = writer.readLine().trimmed();
                QVERIFY(line.startsWith("committed "));
                committed = line.mid(10).toULongLong();
                ++commits;
            }
        }
        writer.kill(); // SIGKILL: no destructor, no final flush
        QVERIFY(writer.waitForFinished());
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit);
        QVERIFY2(QFile::exists(path + QStringLiteral("-wal")), "the writer should have died mid-run");

        const auto trace = TraceReader::read(path.toStdString());
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
