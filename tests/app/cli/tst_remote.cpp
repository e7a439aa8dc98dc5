// SPDX-License-Identifier: Apache-2.0
// Traces on another machine, ssh://HOST/PATH, read through the system's OpenSSH client from
// a real OpenSSH server on a loopback port (sshhost.h): the same figures as the file read
// where it lies, and one sentence naming the path for each way a remote read fails.
#include "sshhost.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

using namespace peaklens;

namespace {

const QString kSource = QStringLiteral(PEAKLENS_SOURCE_DIR "/");

} // namespace

class tst_Remote : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_host = std::make_unique<test::SshHost>();
        if (!m_host->problem().isEmpty())
            QSKIP(qPrintable(m_host->problem()));
    }
    void cleanupTestCase() { m_host.reset(); }

    // Every format, sent over SSH, summarizes to the very JSON the local file gives.
    void aRemoteFileSummarizesAsTheLocalOne_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addRow("native") << QStringLiteral("resources/samples/training-step.peaklens");
        QTest::addRow("trace text") << QStringLiteral("tests/data/modelled-step.pltxt");
        QTest::addRow("a real snapshot, gzipped")
            << QStringLiteral("tests/data/real/snapshot_h200_pools_streams_graph.pickle.gz");
        QTest::addRow("a real Kineto trace, gzipped") << QStringLiteral("tests/data/real/kineto_v100_rank1.pt.trace.json.gz");
    }
    void aRemoteFileSummarizesAsTheLocalOne()
    {
        QFETCH(QString, file);
        const test::ToolRun local =
            test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), QStringLiteral("--json"), kSource + file});
        const test::ToolRun remote =
            test::runTool(QStringLiteral("peaklens-cli"),
                          {QStringLiteral("summary"), QStringLiteral("--json"), test::SshHost::url(kSource + file)});
        QCOMPARE(local.exitCode, 0);
        QVERIFY2(remote.exitCode == 0, remote.err.constData());
        QVERIFY(!local.out.isEmpty());
        // All the same but where the file was read from, which an importer may keep.
        const auto withoutPath = [](const QByteArray &json) {
            QJsonObject summary = QJsonDocument::fromJson(json).object();
            QJsonObject meta = summary[QStringLiteral("meta")].toObject();
            meta.remove(QStringLiteral("source.path"));
            summary[QStringLiteral("meta")] = meta;
            return summary;
        };
        QCOMPARE(withoutPath(remote.out), withoutPath(local.out));
        const QString remotePath = QJsonDocument::fromJson(remote.out)
                                       .object()[QStringLiteral("meta")]
                                       .toObject()[QStringLiteral("source.path")]
                                       .toString();
        QVERIFY(remotePath.isEmpty() || remotePath == test::SshHost::url(kSource + file));
    }

    // A path relative to the remote home folder, as scp writes it.
    void aPathFromTheHomeFolder()
    {
        const QString home = QDir::homePath();
        QTemporaryDir dir(home + QStringLiteral("/peaklens-remote-XXXXXX"));
        QVERIFY(QFile::copy(kSource + QStringLiteral("tests/data/modelled-step.pltxt"), dir.filePath(QStringLiteral("a.pltxt"))));
        const QString relative = QDir(home).relativeFilePath(dir.filePath(QStringLiteral("a.pltxt")));
        const test::ToolRun remote = test::runTool(
            QStringLiteral("peaklens-cli"),
            {QStringLiteral("info"), QStringLiteral("ssh://%1/~/%2").arg(QString::fromLatin1(test::SshHost::kAlias), relative)});
        QVERIFY2(remote.exitCode == 0, remote.err.constData());
        QVERIFY(remote.out.contains("trace-text"));
    }

    // Each failure is one line on stderr naming the path and saying what to do, nothing on
    // stdout, exit code 2.
    void failuresAreOneSentence_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("ssh");       // PEAKLENS_SSH for the row, else the host's
        QTest::addColumn<QString>("remoteCli"); // PEAKLENS_REMOTE_CLI for the row, else this build's
        QTest::addColumn<QString>("said");
        const QString sample = test::SshHost::url(kSource + QStringLiteral("resources/samples/training-step.peaklens"));
        QTest::addRow("no such file there") << test::SshHost::url(QStringLiteral("/nowhere/run.peaklens")) << QString()
                                            << QString()
                                            << QStringLiteral("on peaklens-test, /nowhere/run.peaklens: does not exist.");
        QTest::addRow("no peaklens-cli there") << sample << QString() << QStringLiteral("/nowhere/peaklens-cli")
                                               << QStringLiteral("peaklens-test has no peaklens-cli on its PATH");
        QTest::addRow("a key the host refuses")
            << sample << QStringLiteral("ssh_config_other_key") << QString() << QStringLiteral("peaklens-test refused the key");
        QTest::addRow("nobody listening") << sample << QStringLiteral("-p 1") << QString()
                                          << QStringLiteral("peaklens-test cannot be reached");
        QTest::addRow("another version there")
            << sample << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("older.sh")))
            << QStringLiteral("peaklens-test has PeakLens 0.0.1, this is");
        QTest::addRow("a peaklens-cli from before send there")
            << sample << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("before-send.sh")))
            << QStringLiteral("the peaklens-cli on peaklens-test is older than this PeakLens");
        QTest::addRow("the connection drops mid-file")
            << sample << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("drop.sh")))
            << QStringLiteral("the connection to peaklens-test broke after");
        QTest::addRow("no path") << QStringLiteral("ssh://peaklens-test") << QString() << QString()
                                 << QStringLiteral("names no host and path");
        // Stand-ins for a PeakLens of another version, and for a connection that breaks: the
        // second sends part of the file, then ends the SSH session under it.
        writeScript(QStringLiteral("older.sh"), "echo 'PEAKLENS-SEND 1 0.0.1'\ncat \"$2\"\n");
        // This build's own peaklens-cli asked for a subcommand it does not have, as one
        // from before `send` is asked for `send`.
        writeScript(QStringLiteral("before-send.sh"), "exec " PEAKLENS_BIN_DIR "/peaklens-cli no-such-command \"$2\"\n");
        writeScript(QStringLiteral("drop.sh"),
                    "echo \"PEAKLENS-SEND 1 " PEAKLENS_VERSION "\"\nhead -c 40000 \"$2\"\nsleep 0.3\nkill -9 $PPID\n");
    }
    void failuresAreOneSentence()
    {
        QFETCH(QString, path);
        QFETCH(QString, ssh);
        QFETCH(QString, remoteCli);
        QFETCH(QString, said);
        if (ssh == QLatin1String("-p 1"))
            qputenv("PEAKLENS_SSH", (m_host->sshCommand() + QStringLiteral(" -p 1")).toUtf8());
        else if (!ssh.isEmpty())
            qputenv("PEAKLENS_SSH", m_host->sshCommand(ssh).toUtf8());
        if (!remoteCli.isEmpty())
            qputenv("PEAKLENS_REMOTE_CLI", remoteCli.toUtf8());
        const test::ToolRun run = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), path});
        qputenv("PEAKLENS_SSH", m_host->sshCommand().toUtf8());
        qputenv("PEAKLENS_REMOTE_CLI", QByteArrayLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"));
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + path + QStringLiteral(": ")), qPrintable(err));
        QVERIFY2(err.contains(said), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

private:
    void writeScript(const QString &name, const char *text)
    {
        QFile file(m_scripts.filePath(name));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text);
    }

    std::unique_ptr<test::SshHost> m_host;
    QTemporaryDir m_scripts;
};

QTEST_GUILESS_MAIN(tst_Remote)
#include "tst_remote.moc"
