// SPDX-License-Identifier: Apache-2.0
// Traces on another machine, ssh://HOST/PATH, read through the system's OpenSSH client from
// a real OpenSSH server on a loopback port (sshhost.h): the same figures as the file read
// where it lies, and one sentence naming the path for each way a remote read fails.
#include "chunkytrace.h"
#include "sshhost.h"
#include "testsupport.h"

#include "core/document/filesummary.h"
#include "core/format/remotefile.h"
#include "core/format/tracefollower.h"
#include "core/format/tracereader.h"
#include "core/import/traceloader.h"
#include "core/trace/metadata.h"

#include <QDirIterator>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QThread>

#include <atomic>
#include <csignal>

using namespace peaklens;

namespace {

const QString kSource = QStringLiteral(PEAKLENS_SOURCE_DIR "/");

// Why a training run on the CPU cannot be recorded here, or empty.
QString whyNoTorchRecording()
{
    if (QStringLiteral(PEAKLENS_PYTHON).isEmpty())
        return QStringLiteral("no Python with PyTorch was found at configure time");
    if (!QFile::exists(QStringLiteral(PEAKLENS_BIN_DIR "/libpeaklens_torch.so")))
        return QStringLiteral("libpeaklens_torch.so is not built (LibTorch missing)");
    return {};
}

// `record --host` of examples/train_small.py in `directory` on the test host, copied to
// `directory`/local.
void startRemoteRecording(QProcess &record, const QTemporaryDir &directory, int steps)
{
    record.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"),
                 {QStringLiteral("record"), QStringLiteral("--host"), QString::fromLatin1(test::SshHost::kAlias),
                  QStringLiteral("--backend"), QStringLiteral("torch"), QStringLiteral("--directory"), directory.path(),
                  QStringLiteral("--out"), directory.filePath(QStringLiteral("local")), QStringLiteral("--"),
                  QStringLiteral(PEAKLENS_PYTHON), kSource + QStringLiteral("examples/train_small.py"), QStringLiteral("--steps"),
                  QString::number(steps), QStringLiteral("--device"), QStringLiteral("cpu")});
}

// The trace a recording on the host left in its own folder in `directory`.
QString hostTrace(const QTemporaryDir &directory)
{
    QDirIterator traces(directory.path(), {QStringLiteral("*.peaklens")}, QDir::Files, QDirIterator::Subdirectories);
    while (traces.hasNext()) {
        const QString path = traces.next();
        if (!path.contains(QStringLiteral("/local/")))
            return path;
    }
    return {};
}

QString waitForTrace(const QString &folder, int timeoutMs = 60000)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeoutMs) {
        const QStringList names = QDir(folder).entryList({QStringLiteral("*.peaklens")}, QDir::Files);
        if (!names.isEmpty())
            return QDir(folder).filePath(names.first());
        QThread::msleep(20);
    }
    return {};
}

QByteArray bytesOf(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// A recording on the host that would run for long, its copy here made and growing: the
// copy's path, or empty.
QString longRecordingUnderWay(QProcess &record, const QTemporaryDir &directory)
{
    startRemoteRecording(record, directory, 100000);
    const QString copy = waitForTrace(directory.filePath(QStringLiteral("local")));
    QThread::msleep(1500);
    return copy;
}

// Whether the training startRemoteRecording started in `directory` still runs: a process
// whose working directory it is.
bool trainingRuns(const QTemporaryDir &directory)
{
    for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        if (QFileInfo(QStringLiteral("/proc/%1/cwd").arg(pid)).symLinkTarget() == directory.path()
            && bytesOf(QStringLiteral("/proc/%1/cmdline").arg(pid)).contains("train_small.py"))
            return true;
    }
    return false;
}

// The processes `pid` started, from /proc.
QList<qint64> childrenOf(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/task/%1/children").arg(pid));
    QList<qint64> children;
    if (file.open(QIODevice::ReadOnly)) {
        for (const QByteArray &word : file.readAll().split(' '))
            if (!word.trimmed().isEmpty())
                children << word.trimmed().toLongLong();
    }
    return children;
}

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

    // A summary of a PeakLens trace reads the figures stored in it: it takes only the pages
    // it reads, ends the transfer there, and keeps no copy. It says what the local one says.
    void aSummaryTakesOnlyWhatItReads()
    {
        const test::ScopedCache cache;
        const QString trace = longTrace();
        const QString status = m_scripts.filePath(QStringLiteral("send-status"));
        QFile::remove(status);
        writeScript(QStringLiteral("send-status.sh"),
                    QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli \"$@\"\necho $? >> %1\n").arg(status).toUtf8().constData());
        qputenv("PEAKLENS_REMOTE_CLI",
                QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("send-status.sh"))).toUtf8());
        const auto restore = qScopeGuard([cli = m_host->remoteCli()] { qputenv("PEAKLENS_REMOTE_CLI", cli.toUtf8()); });
        const test::ToolRun local = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), trace});
        const test::ToolRun remote =
            test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), test::SshHost::url(trace)});
        QVERIFY2(remote.exitCode == 0, remote.err.constData());
        QCOMPARE(QByteArray(remote.out).replace(test::SshHost::url(trace).toUtf8(), trace.toUtf8()), local.out);
        QVERIFY(QDir(cache.filePath(QStringLiteral("remote"))).entryList(QDir::Files).isEmpty());
        // `send` on the host was stopped before it sent the whole file.
        QTRY_VERIFY_WITH_TIMEOUT(!bytesOf(status).isEmpty(), 20000);
        QVERIFY2(bytesOf(status).trimmed() != "0", bytesOf(status).constData());
    }

    // Cancelled while a trace arrives and is read: Cancelled, whichever of the two saw it
    // first, and nothing left in the cache.
    void aCancelledReadLeavesNothing()
    {
        const test::ScopedCache cache;
        std::atomic<bool> cancel{false};
        std::atomic<double> reached{0};
        const Progress progress{[&](double fraction) {
                                    reached = fraction;
                                    if (fraction > 0.3)
                                        cancel = true;
                                },
                                &cancel};
        QVERIFY_THROWS_EXCEPTION(Cancelled, loadTrace(test::SshHost::url(longTrace()).toStdString(), progress));
        QVERIFY(reached < 0.9); // the copy was not whole
        QVERIFY(QDir(cache.filePath(QStringLiteral("remote"))).entryList(QDir::Files).isEmpty());
    }

    // A remote file is copied into the cache and read there, as a local file is; opening it
    // again replaces its copy rather than adding one. A long trace, sent in many runs out of
    // file order and read while they arrive, reads as the file on the host does, and its
    // copy is that file, byte for byte.
    void aRemoteFileIsReadFromItsCopyInTheCache_data()
    {
        QTest::addColumn<bool>("longTrace");
        QTest::addRow("the sample, one run") << false;
        QTest::addRow("a long trace, read as it arrives") << true;
    }
    void aRemoteFileIsReadFromItsCopyInTheCache()
    {
        QFETCH(bool, longTrace);
        const test::ScopedCache cache;
        const QString trace =
            longTrace ? this->longTrace() : kSource + QStringLiteral("resources/samples/training-step.peaklens");
        const test::ToolRun local = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("info"), trace});
        for (int time = 0; time < 2; ++time) {
            const test::ToolRun info =
                test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("info"), test::SshHost::url(trace)});
            QVERIFY2(info.exitCode == 0, info.err.constData());
            QCOMPARE(QByteArray(info.out).replace(test::SshHost::url(trace).toUtf8(), trace.toUtf8()), local.out);
        }
        const QStringList copies = QDir(cache.filePath(QStringLiteral("remote"))).entryList(QDir::Files);
        QCOMPARE(copies.size(), qsizetype(1));
        QVERIFY(copies.front().endsWith(QStringLiteral("-") + QFileInfo(trace).fileName()));
        QVERIFY(bytesOf(QDir(cache.filePath(QStringLiteral("remote"))).filePath(copies.front())) == bytesOf(trace));
    }

    // A copy made keeps the cache within PEAKLENS_CACHE_LIMIT: copies unused for days go,
    // the oldest first, whichever kind they are; without a limit they stay.
    void aCopyKeepsTheCacheWithinItsLimit_data()
    {
        QTest::addColumn<QByteArray>("limit");
        QTest::addColumn<bool>("oldStay");
        QTest::addRow("over the limit") << QByteArray("300KiB") << false;
        QTest::addRow("no limit") << QByteArray("0") << true;
    }
    void aCopyKeepsTheCacheWithinItsLimit()
    {
        QFETCH(QByteArray, limit);
        QFETCH(bool, oldStay);
        const test::ScopedCache cache(limit);
        const QStringList old = {cache.filePath(QStringLiteral("remote/0123456789abcdef-other.peaklens")),
                                 cache.filePath(QStringLiteral("copies/snapshot.pickle.0123456789abcdef.peaklens"))};
        for (const QString &path : old)
            QVERIFY(test::placeFileUsed(path, 200 * 1024, 3 * 24));
        const QString sample = kSource + QStringLiteral("resources/samples/training-step.peaklens");
        const test::ToolRun info =
            test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("info"), test::SshHost::url(sample)});
        QVERIFY2(info.exitCode == 0, info.err.constData());
        for (const QString &path : old)
            QCOMPARE(QFile::exists(path), oldStay);
        const QStringList copies = QDir(cache.filePath(QStringLiteral("remote"))).entryList(QDir::Files);
        QCOMPARE(copies.filter(QStringLiteral("-training-step.peaklens")).size(), qsizetype(1));
        QCOMPARE(copies.size(), qsizetype(oldStay ? 2 : 1));
    }

    // A big trace opens as the window around its peak, read as it arrives; the whole-file
    // overview and other windows are then read from the copy where it lies once whole.
    void aWindowOfABigTraceIsReadFromTheKeptCopy()
    {
        const test::ScopedCache cache;
        QTemporaryDir traces;
        // Big enough to open as a window (the benchmarks' own training trace).
        const QString trace = traces.filePath(QStringLiteral("training.peaklens"));
        QCOMPARE(QProcess::execute(QStringLiteral(PEAKLENS_BIN_DIR "/bench_tracefile"),
                                   {QStringLiteral("write"), QStringLiteral("3000000"), trace}),
                 0);
        const OpenedTrace local = openTraceWindow(trace.toStdString());
        QCOMPARE(local.windowOf, trace.toStdString()); // a window, not the whole trace
        const OpenedTrace remote = openTraceWindow(test::SshHost::url(trace).toStdString());
        QVERIFY(remote.trace->events == local.trace->events);
        const QStringList copies = QDir(cache.filePath(QStringLiteral("remote"))).entryList(QDir::Files);
        QCOMPARE(copies.size(), qsizetype(1));
        QCOMPARE(QString::fromStdString(remote.windowOf),
                 QDir(cache.filePath(QStringLiteral("remote"))).filePath(copies.front()));
        QVERIFY(bytesOf(QString::fromStdString(remote.windowOf)) == bytesOf(trace));
    }

    // PeakLens keeps one connection to a host for its commands, so the second read logs in no
    // more; not where PEAKLENS_SSH_KEEP=0 says to keep none, nor where the user's own ssh
    // configuration shares connections (then it is theirs that is kept).
    void readsShareOneConnection_data()
    {
        QTest::addColumn<QString>("keep");   // PEAKLENS_SSH_KEEP
        QTest::addColumn<bool>("ownMaster"); // a ControlPath in the user's ssh configuration
        QTest::addColumn<int>("logins");     // for two reads
        QTest::addRow("kept by PeakLens") << QString() << false << 1;
        QTest::addRow("PEAKLENS_SSH_KEEP=0") << QStringLiteral("0") << false << 2;
        QTest::addRow("the user's own") << QString() << true << 1;
    }
    void readsShareOneConnection()
    {
        QFETCH(QString, keep);
        QFETCH(bool, ownMaster);
        QFETCH(int, logins);
        m_host->closeConnections();
        const QString own = m_scripts.filePath(QStringLiteral("own-master"));
        const QString config = m_scripts.filePath(QStringLiteral("ssh_config_own_master"));
        if (ownMaster) {
            QFile file(config);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(bytesOf(m_host->path(QStringLiteral("ssh_config")))
                       + QStringLiteral("  ControlMaster auto\n  ControlPath %1\n  ControlPersist 60\n").arg(own).toUtf8());
            file.close();
            qputenv("PEAKLENS_SSH", QStringLiteral("ssh -F %1").arg(config).toUtf8());
        }
        if (!keep.isEmpty())
            qputenv("PEAKLENS_SSH_KEEP", keep.toUtf8());
        const auto restore = qScopeGuard([&] {
            if (ownMaster)
                QProcess::execute(QStringLiteral("ssh"), {QStringLiteral("-F"), config, QStringLiteral("-O"),
                                                          QStringLiteral("exit"), QString::fromLatin1(test::SshHost::kAlias)});
            qunsetenv("PEAKLENS_SSH_KEEP");
            qputenv("PEAKLENS_SSH", m_host->sshCommand().toUtf8());
            m_host->closeConnections();
        });
        const QString sample = test::SshHost::url(kSource + QStringLiteral("resources/samples/training-step.peaklens"));
        const int before = m_host->logins();
        for (int time = 0; time < 2; ++time) {
            const test::ToolRun summary = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), sample});
            QVERIFY2(summary.exitCode == 0, summary.err.constData());
        }
        QCOMPARE(m_host->logins() - before, logins);
        // PeakLens's socket is there exactly when PeakLens keeps the connection.
        QCOMPARE(m_host->hasKeptConnection(), keep.isEmpty() && !ownMaster);
        QCOMPARE(QFileInfo::exists(own), ownMaster);
    }

    // The options that keep the connection: with a check that the host still answers unless
    // the user's configuration has one; none where PEAKLENS_SSH_KEEP=0, nor where the folder
    // for the socket could be entered by others.
    void theKeptConnectionsOptions_data()
    {
        QTest::addColumn<QByteArray>("keep");    // PEAKLENS_SSH_KEEP
        QTest::addColumn<QString>("configured"); // added to the client configuration
        QTest::addColumn<bool>("openFolder");    // the socket folder left open to others
        QTest::addColumn<bool>("kept");
        QTest::addColumn<bool>("alive");
        QTest::addRow("by default") << QByteArray() << QString() << false << true << true;
        QTest::addRow("the user's ServerAliveInterval")
            << QByteArray() << QStringLiteral("  ServerAliveInterval 5\n") << false << true << false;
        QTest::addRow("PEAKLENS_SSH_KEEP=0") << QByteArray("0") << QString() << false << false << false;
        QTest::addRow("a socket folder others can enter") << QByteArray() << QString() << true << false << false;
    }
    void theKeptConnectionsOptions()
    {
        QFETCH(QByteArray, keep);
        QFETCH(QString, configured);
        QFETCH(bool, openFolder);
        QFETCH(bool, kept);
        QFETCH(bool, alive);
        QTemporaryDir runtime(QStringLiteral("/tmp/plrun-XXXXXX"));
        QVERIFY(QDir(runtime.path()).mkdir(QStringLiteral("peaklens-ssh")));
        QVERIFY(QFile::setPermissions(runtime.filePath(QStringLiteral("peaklens-ssh")),
                                      openFolder ? QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadOther
                                                       | QFile::ExeOther
                                                 : QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        const QString config = m_scripts.filePath(QStringLiteral("ssh_config_options"));
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bytesOf(m_host->path(QStringLiteral("ssh_config"))) + configured.toUtf8());
        file.close();
        const QByteArray runtimeBefore = qgetenv("XDG_RUNTIME_DIR");
        qputenv("XDG_RUNTIME_DIR", runtime.path().toUtf8());
        qputenv("PEAKLENS_SSH", QStringLiteral("ssh -F %1").arg(config).toUtf8());
        if (!keep.isEmpty())
            qputenv("PEAKLENS_SSH_KEEP", keep);
        const auto restore = qScopeGuard([&] {
            runtimeBefore.isEmpty() ? qunsetenv("XDG_RUNTIME_DIR") : qputenv("XDG_RUNTIME_DIR", runtimeBefore);
            qunsetenv("PEAKLENS_SSH_KEEP");
            qputenv("PEAKLENS_SSH", m_host->sshCommand().toUtf8());
        });
        const std::vector<std::string> line = RemoteCommand::commandLine(test::SshHost::kAlias, {"send", "x"});
        const auto has = [&](const std::string &option) { return std::find(line.begin(), line.end(), option) != line.end(); };
        QCOMPARE(has("ControlMaster=auto"), kept);
        QCOMPARE(has("ControlPath=" + runtime.filePath(QStringLiteral("peaklens-ssh")).toStdString() + "/%C"), kept);
        QCOMPARE(has("ServerAliveInterval=30"), alive);
        QCOMPARE(line.at(line.size() - 3), std::string(test::SshHost::kAlias)); // the options before the host
    }

    // Another window of a document open from a host (from a time, as View > Read the Visible
    // Time in Full Detail asks) reads the copy its first one did; a new open fetches again.
    void anotherWindowReadsTheSameCopy()
    {
        const test::ScopedCache cache;
        const QString sends = m_scripts.filePath(QStringLiteral("sends"));
        writeScript(
            QStringLiteral("counting.sh"),
            QStringLiteral("echo sent >> %1\nexec " PEAKLENS_BIN_DIR "/peaklens-cli \"$@\"\n").arg(sends).toUtf8().constData());
        qputenv("PEAKLENS_REMOTE_CLI", QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("counting.sh"))).toUtf8());
        const auto restore = qScopeGuard([cli = m_host->remoteCli()] { qputenv("PEAKLENS_REMOTE_CLI", cli.toUtf8()); });
        const auto sent = [&] { return bytesOf(sends).count('\n'); };
        const std::string url =
            test::SshHost::url(kSource + QStringLiteral("resources/samples/training-step.peaklens")).toStdString();
        const OpenedTrace first = openTraceWindow(url);
        QCOMPARE(sent(), 1);
        const OpenedTrace again = openTraceWindow(url, {}, first.trace->events.timeNs(0));
        QCOMPARE(sent(), 1);
        QCOMPARE(again.trace->events.size(), first.trace->events.size());
        QCOMPARE(again.trace->metaValue(metakey::SourcePath), first.trace->metaValue(metakey::SourcePath));
        openTraceWindow(url);
        QCOMPARE(sent(), 2);
    }

    // A path relative to the remote home folder, as scp writes it.
    void aPathFromTheHomeFolder()
    {
        // Where the host's command starts: its home folder (here, the test host's own).
        const QString home = m_host->home();
        QVERIFY(QDir(home).mkpath(QStringLiteral("runs")));
        QVERIFY(QFile::copy(kSource + QStringLiteral("tests/data/modelled-step.pltxt"), home + QStringLiteral("/runs/a.pltxt")));
        const QString relative = QStringLiteral("runs/a.pltxt");
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
        QTest::addRow("the connection drops in the file's first pages")
            << sample << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("drop-early.sh")))
            << QStringLiteral("the connection to peaklens-test broke after 40000 bytes");
        QTest::addRow("the connection drops while the trace is read")
            << sample << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("drop-late.sh")))
            << QStringLiteral("the connection to peaklens-test broke after 100000 bytes");
        QTest::addRow("no path") << QStringLiteral("ssh://peaklens-test") << QString() << QString()
                                 << QStringLiteral("names no host and path");
        // Hosts whose frames do not make the file they announced (100 bytes).
        const auto framing = [&](const char *script) {
            return QStringLiteral("sh %1").arg(m_scripts.filePath(QString::fromLatin1(script)));
        };
        QTest::addRow("a host that sends bytes past the file's end")
            << sample << QString() << framing("past-the-end.sh")
            << QStringLiteral("peaklens-test sent more than the 100 bytes it announced.");
        QTest::addRow("a host that leaves a gap")
            << sample << QString() << framing("gap.sh")
            << QStringLiteral("peaklens-test sent 50 of its 100 bytes; nothing of it was kept.");
        QTest::addRow("a host that sends no frames")
            << sample << QString() << framing("no-frames.sh") << QStringLiteral("is not a file from peaklens-cli send.");
        const QByteArray announce = "printf 'PEAKLENS-SEND 1 " PEAKLENS_VERSION "\\n100\\n'\n";
        // A frame: an 8-byte offset and a 4-byte length, little-endian, then its bytes.
        writeScript(QStringLiteral("past-the-end.sh"),
                    QByteArray(announce + "printf '\\310\\0\\0\\0\\0\\0\\0\\0\\12\\0\\0\\0'\nprintf 0123456789\n").constData());
        writeScript(QStringLiteral("gap.sh"),
                    QByteArray(announce + "printf '\\0\\0\\0\\0\\0\\0\\0\\0\\62\\0\\0\\0'\nprintf '%050d' 0\n").constData());
        writeScript(QStringLiteral("no-frames.sh"), QByteArray(announce + "printf 'hello, world'\n").constData());
        // Stand-ins for a PeakLens of another version, and for a connection that breaks: the
        // last two send part of what `send` sends, then end the SSH session under it.
        writeScript(QStringLiteral("older.sh"), "echo 'PEAKLENS-SEND 1 0.0.1'\ncat \"$2\"\n");
        // This build's own peaklens-cli asked for a subcommand it does not have, as one
        // from before `send` is asked for `send`.
        writeScript(QStringLiteral("before-send.sh"), "exec " PEAKLENS_BIN_DIR "/peaklens-cli no-such-command \"$2\"\n");
        // The first 40,000 bytes are not yet all of the file's first pages (PageOrder::kHeadBytes),
        // the first 100,000 are: the sample is then being read when the connection drops.
        for (const int bytes : {40000, 100000}) {
            writeScript(bytes == 40000 ? QStringLiteral("drop-early.sh") : QStringLiteral("drop-late.sh"),
                        qPrintable(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli send \"$2\" | head -c %1\n"
                                                                   "sleep 0.3\nkill -9 $PPID\n")
                                       .arg(bytes)));
        }
    }
    void failuresAreOneSentence()
    {
        QFETCH(QString, path);
        QFETCH(QString, ssh);
        QFETCH(QString, remoteCli);
        QFETCH(QString, said);
        if (!ssh.isEmpty())
            m_host->closeConnections();
        if (ssh == QLatin1String("-p 1"))
            qputenv("PEAKLENS_SSH", (m_host->sshCommand() + QStringLiteral(" -p 1")).toUtf8());
        else if (!ssh.isEmpty())
            qputenv("PEAKLENS_SSH", m_host->sshCommand(ssh).toUtf8());
        if (!remoteCli.isEmpty())
            qputenv("PEAKLENS_REMOTE_CLI", remoteCli.toUtf8());
        const test::ToolRun run = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), path});
        qputenv("PEAKLENS_SSH", m_host->sshCommand().toUtf8());
        qputenv("PEAKLENS_REMOTE_CLI", m_host->remoteCli().toUtf8());
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + path + QStringLiteral(": ")), qPrintable(err));
        QVERIFY2(err.contains(said), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

    // A training run recorded on the host grows here as it is written, as any file being
    // written does for a follower; once finished, the copy is the host's file, byte for byte.
    void aRecordingOnAHostIsFollowedHereAndEndsIdentical()
    {
        if (const QString why = whyNoTorchRecording(); !why.isEmpty())
            QSKIP(qPrintable(why));
        QTemporaryDir directory;
        QProcess record;
        startRemoteRecording(record, directory, 100);
        const QString copy = waitForTrace(directory.filePath(QStringLiteral("local")));
        QVERIFY2(!copy.isEmpty(), record.readAllStandardError().constData());
        TraceFollower follower(copy.toStdString());
        int grew = 0;
        QElapsedTimer clock;
        clock.start();
        while (follower.isLive() && clock.elapsed() < 300000) {
            if (follower.poll().newEvents > 0)
                ++grew;
            QThread::msleep(50);
        }
        QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
        QVERIFY2(grew >= 3, qPrintable(QString::number(grew)));
        QVERIFY(record.waitForFinished(120000));
        const QByteArray out = record.readAllStandardOutput();
        QVERIFY2(record.exitCode() == 0, record.readAllStandardError().constData());
        QVERIFY2(out.contains("peaklens-test: recorded 1 trace file(s)"), out.constData());
        QVERIFY2(out.contains("step 99 loss"), out.constData()); // the command's own output, as it ran
        const QString original = hostTrace(directory);
        QVERIFY(!original.isEmpty());
        QCOMPARE(QFileInfo(copy).fileName(), QFileInfo(original).fileName());
        QVERIFY(bytesOf(copy) == bytesOf(original));
        // It remembers where its original lies, for a rerun there.
        QCOMPARE(QString::fromUtf8(bytesOf(copy + QStringLiteral(".origin"))).trimmed(), test::SshHost::url(original));
        // What the follower read is what the file holds.
        QCOMPARE(follower.trace().events.size(), TraceReader::read(copy.toStdString())->events.size());
    }

    // Stopping here stops the run there; what it wrote still comes, finished.
    void stoppingHereStopsTheRunThere()
    {
        if (const QString why = whyNoTorchRecording(); !why.isEmpty())
            QSKIP(qPrintable(why));
        QTemporaryDir directory;
        QProcess record;
        const QString copy = longRecordingUnderWay(record, directory);
        QVERIFY(!copy.isEmpty());
        ::kill(static_cast<pid_t>(record.processId()), SIGTERM);
        QVERIFY(record.waitForFinished(60000));
        QCOMPARE(record.exitCode(), 128 + SIGTERM); // the training's own end
        QVERIFY(record.readAllStandardError().contains("Stopping the run on peaklens-test"));
        QVERIFY(record.readAllStandardOutput().contains("recorded 1 trace file(s)"));
        const auto trace = TraceReader::read(copy.toStdString());
        QVERIFY(trace->events.size() > 0);
        QVERIFY(!QFile::exists(copy + QStringLiteral("-wal")));
    }

    // A connection cut mid-run: one sentence, and what arrived stays readable.
    void aCutConnectionKeepsWhatArrived()
    {
        if (const QString why = whyNoTorchRecording(); !why.isEmpty())
            QSKIP(qPrintable(why));
        QTemporaryDir directory;
        QProcess record;
        const QString copy = longRecordingUnderWay(record, directory);
        QVERIFY(!copy.isEmpty());
        const QList<qint64> ssh = childrenOf(record.processId());
        QCOMPARE(ssh.size(), qsizetype(1));
        ::kill(static_cast<pid_t>(ssh.front()), SIGKILL);
        QVERIFY(record.waitForFinished(60000));
        QCOMPARE(record.exitCode(), 1);
        const QString err = QString::fromUtf8(record.readAllStandardError());
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: the connection to peaklens-test was cut after")), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("what arrived is kept, readable up to its last commit: ") + copy), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
        const auto trace = TraceReader::read(copy.toStdString());
        QVERIFY(trace->events.size() > 0);
        QCOMPARE(trace->metaValue(metakey::WriterState), std::string("writing")); // never finished
        // The run on the host ended with the connection, having written at least as much.
        QElapsedTimer clock;
        clock.start();
        while (trainingRuns(directory) && clock.elapsed() < 30000)
            QThread::msleep(100);
        QVERIFY(!trainingRuns(directory));
        QVERIFY(TraceReader::read(hostTrace(directory).toStdString())->events.size() >= trace->events.size());
    }

    // A run on the host that fills the disk it writes to ends in one sentence saying so, and
    // what it committed arrives here. The full disk is a 1 MiB tmpfs (mounting one needs
    // root; the test skips without, and without the torch recorder that `record` asks for).
    void aFullDiskThereIsOneSentence()
    {
        if (const QString why = whyNoTorchRecording(); !why.isEmpty())
            QSKIP(qPrintable(why)); // the torch backend is the one that runs without a GPU
        QTemporaryDir full, traces, here;
        if (::geteuid() != 0
            || QProcess::execute(QStringLiteral("mount"), {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                                                           QStringLiteral("size=1m"), QStringLiteral("tmpfs"), full.path()})
                   != 0)
            QSKIP("no small file system to fill: mounting a tmpfs needs root");
        const auto unmount = qScopeGuard([&] {
            QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), full.path()});
        });
        const QString source = traces.filePath(QStringLiteral("long.peaklens"));
        test::writeChunkyTrace(source.toStdString(), 1000000);
        const QString copied = here.filePath(QStringLiteral("copied"));
        const test::ToolRun run = test::runTool(
            QStringLiteral("peaklens-cli"),
            {QStringLiteral("record"), QStringLiteral("--host"), QString::fromLatin1(test::SshHost::kAlias),
             QStringLiteral("--backend"), QStringLiteral("torch"), QStringLiteral("--directory"), full.path(),
             QStringLiteral("--out"), copied, QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"),
             QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-test-livewriter %1 $PEAKLENS_OUT/run.peaklens --commit-every 65536")
                 .arg(source)});
        QVERIFY2(run.exitCode != 0, run.out.constData());
        const QList<QByteArray> lines = run.out.trimmed().split('\n');
        const QString last = QString::fromUtf8(lines.back());
        QVERIFY2(last.startsWith(QStringLiteral("peaklens-test: recorded 1 trace file(s)")), qPrintable(last));
        QVERIFY2(last.contains(QStringLiteral("the disk it wrote to is full (")), qPrintable(last));
        QVERIFY2(last.contains(QStringLiteral("copied to ") + copied), qPrintable(last));
        const auto trace = TraceReader::read(QDir(copied).filePath(QStringLiteral("run.peaklens")).toStdString());
        QVERIFY(trace->events.size() > 0 && trace->events.size() < 1000000);
    }

    // rerun ssh://HOST/PATH runs on the host; what it prints names the copies here.
    void aRerunOnAHostPrintsItsCopies()
    {
        if (const QString why = whyNoTorchRecording(); !why.isEmpty())
            QSKIP(qPrintable(why));
        QTemporaryDir directory;
        const QString recorded = directory.filePath(QStringLiteral("recorded"));
        const test::ToolRun record = test::runTool(
            QStringLiteral("peaklens-cli"),
            {QStringLiteral("record"), QStringLiteral("--backend"), QStringLiteral("torch"), QStringLiteral("--out"), recorded,
             QStringLiteral("--"), QStringLiteral(PEAKLENS_PYTHON), kSource + QStringLiteral("examples/train_small.py"),
             QStringLiteral("--steps"), QStringLiteral("4"), QStringLiteral("--device"), QStringLiteral("cpu")},
            300000);
        QVERIFY2(record.exitCode == 0, record.err.constData());
        const QString trace = QDir(recorded).filePath(QDir(recorded).entryList({QStringLiteral("*.peaklens")}).value(0));
        const QString copies = directory.filePath(QStringLiteral("rerun"));
        const test::ToolRun rerun =
            test::runTool(QStringLiteral("peaklens-cli"),
                          {QStringLiteral("rerun"), test::SshHost::url(trace), QStringLiteral("--checkpoint"),
                           QStringLiteral("all"), QStringLiteral("--json"), QStringLiteral("--out"), copies},
                          300000);
        QVERIFY2(rerun.exitCode == 0, rerun.err.constData());
        QVERIFY(rerun.err.contains("step 3 loss")); // the training's output, as it ran there
        const QJsonObject result = QJsonDocument::fromJson(rerun.out).object();
        const QString runTrace = result[QStringLiteral("measured")].toObject()[QStringLiteral("trace")].toString();
        const QString baselineTrace = result[QStringLiteral("baseline")]
                                          .toObject()[QStringLiteral("measured")]
                                          .toObject()[QStringLiteral("trace")]
                                          .toString();
        for (const QString &copy : {runTrace, baselineTrace})
            QVERIFY2(copy.startsWith(copies + QLatin1Char('/')) && QFile::exists(copy), qPrintable(copy));
        QVERIFY(result[QStringLiteral("gradients")].toObject()[QStringLiteral("agree")].toBool());
        QVERIFY(result[QStringLiteral("measured")].toObject()[QStringLiteral("peak_bytes")].toInteger()
                < result[QStringLiteral("baseline")]
                      .toObject()[QStringLiteral("measured")]
                      .toObject()[QStringLiteral("peak_bytes")]
                      .toInteger());
    }

    void aRecordingThatCannotStartIsOneSentence_data()
    {
        QTest::addColumn<QString>("ssh");
        QTest::addColumn<QString>("remoteCli");
        QTest::addColumn<QString>("said");
        QTest::addRow("no peaklens-cli there") << QString() << QStringLiteral("/nowhere/peaklens-cli")
                                               << QStringLiteral("peaklens-test has no peaklens-cli on its PATH");
        QTest::addRow("a key the host refuses")
            << QStringLiteral("ssh_config_other_key") << QString() << QStringLiteral("peaklens-test refused the key");
        QTest::addRow("a peaklens-cli from before record --send there")
            << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("before-send.sh")))
            << QStringLiteral("the peaklens-cli on peaklens-test is older than this PeakLens");
        // Hosts that answer with what a PeakLens never sends: bytes that are no frames, and a
        // trace named outside the run's folder.
        QTest::addRow("a host that sends no frames")
            << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("noise.sh")))
            << QStringLiteral("peaklens-test: sent a frame PeakLens does not know; the stream is damaged");
        QTest::addRow("a host that names a trace outside the folder")
            << QString() << QStringLiteral("sh %1").arg(m_scripts.filePath(QStringLiteral("escape.sh")))
            << QStringLiteral("named a trace \"../escaped.peaklens\", which is no file name PeakLens writes");
        writeScript(QStringLiteral("before-send.sh"), "exec " PEAKLENS_BIN_DIR "/peaklens-cli no-such-command \"$2\"\n");
        writeScript(QStringLiteral("noise.sh"),
                    "echo \"PEAKLENS-SEND 1 " PEAKLENS_VERSION "\"\nprintf 'Zgarbage%.0s' $(seq 200)\n");
        writeScript(QStringLiteral("escape.sh"), "echo \"PEAKLENS-SEND 1 " PEAKLENS_VERSION
                                                 "\"\nprintf 'N\\001\\000\\000\\000\\023\\000\\000\\000\\000\\000\\000\\000"
                                                 "../escaped.peaklens'\n");
    }
    void aRecordingThatCannotStartIsOneSentence()
    {
        QFETCH(QString, ssh);
        QFETCH(QString, remoteCli);
        QFETCH(QString, said);
        if (!ssh.isEmpty()) {
            m_host->closeConnections();
            qputenv("PEAKLENS_SSH", m_host->sshCommand(ssh).toUtf8());
        }
        if (!remoteCli.isEmpty())
            qputenv("PEAKLENS_REMOTE_CLI", remoteCli.toUtf8());
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("local"));
        const test::ToolRun run =
            test::runTool(QStringLiteral("peaklens-cli"),
                          {QStringLiteral("record"), QStringLiteral("--host"), QString::fromLatin1(test::SshHost::kAlias),
                           QStringLiteral("--out"), out, QStringLiteral("--"), QStringLiteral("true")});
        qputenv("PEAKLENS_SSH", m_host->sshCommand().toUtf8());
        qputenv("PEAKLENS_REMOTE_CLI", m_host->remoteCli().toUtf8());
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.isEmpty());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ")) && err.contains(said), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("nothing had arrived")), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
        QVERIFY(!QFileInfo::exists(out)); // nothing made here
        QVERIFY(!QFileInfo::exists(directory.filePath(QStringLiteral("escaped.peaklens"))));
    }

private:
    // A long recording's trace (2M events), written once.
    QString longTrace()
    {
        const QString trace = m_scripts.filePath(QStringLiteral("long.peaklens"));
        if (!QFileInfo::exists(trace))
            test::writeChunkyTrace(trace.toStdString(), 2000000);
        return trace;
    }
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
