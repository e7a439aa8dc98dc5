// SPDX-License-Identifier: GPL-3.0-or-later
// The window and a GPU host over SSH: a real OpenSSH server on a loopback port stands in
// for the host (sshhost.h). A trace there opens as ssh://HOST/PATH; File > Record runs the
// command there and follows its trace here as it grows.
#include "sshhost.h"
#include "testsupport.h"

#include "livecontroller.h"
#include "mainwindow.h"
#include "models/runsmodel.h"
#include "recorddialog.h"
#include "runrecord.h"
#include "widgets/runspane.h"
#include "windowopen.h"

#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/metadata.h"
#include "models/ranksmodel.h"
#include "widgets/rankspane.h"

#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

bool load(MainWindow &window, const QString &path)
{
    return test::openInWindow(window, path);
}

// Whether a training run on the CPU can be recorded here.
bool canRecord()
{
    return !QStringLiteral(PEAKLENS_PYTHON).isEmpty() && QFile::exists(QStringLiteral(PEAKLENS_BIN_DIR "/libpeaklens_torch.so"));
}

// Where the app keeps its data (recordings from a host, reruns of a trace on one), in
// `directory`/data while it lives.
struct DataHome
{
    explicit DataHome(const QTemporaryDir &directory)
    {
        qputenv("XDG_DATA_HOME", directory.filePath(QStringLiteral("data")).toUtf8());
    }
    ~DataHome() { qunsetenv("XDG_DATA_HOME"); }
    DataHome(const DataHome &) = delete;
    DataHome &operator=(const DataHome &) = delete;
};

} // namespace

class tst_RemoteWindow : public QObject
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

    void aRemoteTraceOpensOverSsh()
    {
        MainWindow window;
        const QString remote = test::SshHost::url(kSample);
        QVERIFY(load(window, remote));
        QCOMPARE(window.document()->filePath(), remote);
        QCOMPARE(window.document()->trace->events.size(), loadTrace(test::ss(kSample))->events.size());

        m_host->closeConnections();
        qputenv("PEAKLENS_SSH", m_host->sshCommand(QStringLiteral("ssh_config_other_key")).toUtf8());
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openFile(remote);
        QVERIFY(QTest::qWaitFor([&] { return failed.count() > 0; }, 60000));
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(QStringLiteral("refused the key")), qPrintable(message));
        QCOMPARE(window.document()->filePath(), remote); // what was open stays
        qputenv("PEAKLENS_SSH", m_host->sshCommand().toUtf8());
    }

    // A folder of ranks on the host opens as ranks, as a folder here does.
    void aRemoteFolderOpensAsRanks()
    {
        QTemporaryDir directory;
        const QString run = directory.filePath(QStringLiteral("run"));
        QVERIFY(QDir().mkpath(run));
        const auto sample = loadTrace(test::ss(kSample));
        for (int rank = 0; rank < 2; ++rank) {
            Trace trace = *sample;
            trace.meta[std::string(metakey::Rank)] = std::to_string(rank);
            trace.meta[std::string(metakey::WorldSize)] = "2";
            TraceWriter::writeTrace(trace, QDir(run).filePath(QStringLiteral("rank%1.peaklens").arg(rank)).toStdString());
        }
        MainWindow window;
        const QString remote = test::SshHost::url(run);
        QVERIFY(load(window, remote));
        QCOMPARE(window.processes().size(), std::size_t(2));
        QCOMPARE(window.ranksPane()->model()->rowCount(), 2);
        QCOMPARE(window.document()->filePath(), remote + QStringLiteral("/rank0.peaklens"));
        QCOMPARE(window.document()->trace->metaValue(metakey::Rank), std::string("0"));
        QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0), remote);

        // A folder there with no traces says so, naming it.
        QVERIFY(QDir().mkpath(directory.filePath(QStringLiteral("empty"))));
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openFile(test::SshHost::url(directory.filePath(QStringLiteral("empty"))));
        QVERIFY(failed.wait(60000));
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(QStringLiteral("no *.peaklens traces")), qPrintable(message));
    }

    // A recorded trace opened from its host is rerun there: the run's and the baseline's
    // traces come back and the Runs table compares them as it does a rerun here.
    void aTraceOnAHostIsRerunThere()
    {
        if (!canRecord())
            QSKIP("no PyTorch or no torch recorder built: nothing to rerun");
        QTemporaryDir directory;
        const DataHome data(directory);
        // Recorded where the host keeps it: this machine, reached over SSH.
        const QString out = directory.filePath(QStringLiteral("recorded"));
        const test::ToolRun recorded =
            test::runTool(QStringLiteral("peaklens-cli"),
                          {QStringLiteral("record"), QStringLiteral("--backend"), QStringLiteral("torch"),
                           QStringLiteral("--out"), out, QStringLiteral("--"), QStringLiteral(PEAKLENS_PYTHON),
                           QStringLiteral(PEAKLENS_SOURCE_DIR "/examples/train_small.py"), QStringLiteral("--steps"),
                           QStringLiteral("4"), QStringLiteral("--device"), QStringLiteral("cpu")},
                          300000);
        QVERIFY2(recorded.exitCode == 0, recorded.err.constData());
        const QStringList traces = QDir(out).entryList({QStringLiteral("*.peaklens")}, QDir::Files);
        QCOMPARE(traces.size(), qsizetype(1));
        MainWindow window;
        QVERIFY(load(window, test::SshHost::url(QDir(out).filePath(traces.front()))));
        rerunEveryLayer(window);
        if (QTest::currentTestFailed())
            return;
        for (const QString &trace : window.runsPane()->runs()->run(1).tracePaths)
            QVERIFY2(trace.startsWith(directory.filePath(QStringLiteral("data"))) && QFile::exists(trace), qPrintable(trace));
        // Nothing was written beside the trace on the host: its reruns are kept here.
        QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).size(), qsizetype(2)); // trace, manifest
    }

    // File > Record on a host over SSH: the run there is followed here as it writes, the
    // finished copy is the host's file, byte for byte, and Rerun reruns it there.
    void aRecordingOnAHostGrowsLiveAndEndsIdentical()
    {
        if (!canRecord())
            QSKIP("no PyTorch or no torch recorder built: nothing to record");
        QTemporaryDir directory;
        const DataHome data(directory);
        MainWindow window;
        RecordDialog *dialog = window.recordDialog();
        auto *backend = dialog->findChild<QComboBox *>(QStringLiteral("backend"));
        backend->setCurrentIndex(backend->findData(QStringLiteral("torch")));
        dialog->setHost(QString::fromLatin1(test::SshHost::kAlias));
        dialog->setCommand(
            QStringLiteral(PEAKLENS_PYTHON " " PEAKLENS_SOURCE_DIR "/examples/train_small.py --steps 150 --device cpu"),
            directory.path());
        QList<std::size_t> grown;
        connect(window.live(), &LiveController::grown, this,
                [&](const DocumentPtr &document) { grown << document->trace->events.size(); });
        QSignalSpy recorded(dialog, &RecordDialog::recorded);
        QSignalSpy started(dialog, &RecordDialog::started);
        dialog->startRecording();
        QVERIFY(recorded.wait(900000));
        const QStringList traces = recorded.first().at(0).toStringList();
        QCOMPARE(traces.size(), qsizetype(1));
        QVERIFY2(recorded.first().at(1).toString().isEmpty(), qPrintable(recorded.first().at(1).toString()));
        QVERIFY2(traces.front().startsWith(directory.filePath(QStringLiteral("data"))), qPrintable(traces.front()));
        // It grew while it was written: documents of more and more events.
        QCOMPARE(started.count(), 1); // the copy, followed from its first commit
        QVERIFY2(grown.size() >= 2 && grown.front() < grown.back(),
                 qPrintable(QStringLiteral("%1 grown documents; the status line: %2")
                                .arg(grown.size())
                                .arg(window.statusBar()->currentMessage())));
        // The host's own file, where the run wrote it: the same bytes.
        QDirIterator onHost(directory.path(), {QFileInfo(traces.front()).fileName()}, QDir::Files, QDirIterator::Subdirectories);
        QString original;
        while (onHost.hasNext())
            if (const QString path = onHost.next(); !path.startsWith(directory.filePath(QStringLiteral("data"))))
                original = path;
        QVERIFY(!original.isEmpty());
        QFile copy(traces.front()), file(original);
        QVERIFY(copy.open(QIODevice::ReadOnly) && file.open(QIODevice::ReadOnly));
        QVERIFY(copy.readAll() == file.readAll());
        // The window shows all of it once the follow has ended.
        const std::size_t events = loadTrace(test::ss(traces.front()))->events.size();
        QTRY_VERIFY_WITH_TIMEOUT(!window.live()->following() || !window.live()->following()->isFollowing(), 60000);
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->trace->events.size(), events, 60000);

        // The copy remembers where it was recorded, and is rerun there.
        QFile origin(traces.front() + QStringLiteral(".origin"));
        QVERIFY(origin.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(origin.readAll()).trimmed(), test::SshHost::url(original));
        rerunEveryLayer(window);
    }

private:
    // Reruns the open trace with every layer checkpointed, on its host, and checks the row it
    // adds: the run's and the baseline's traces compared, the measured peak under the
    // baseline's, the gradients agreeing.
    static void rerunEveryLayer(MainWindow &window)
    {
        window.setCheckpointStrategy(QStringLiteral("all"));
        QSignalSpy finished(&window, &MainWindow::rerunFinished);
        window.rerun();
        QVERIFY(finished.wait(300000));
        const RunRecord &run = window.runsPane()->runs()->run(1);
        QVERIFY2(run.outcome().isEmpty(), qPrintable(run.outcome()));
        QCOMPARE(run.tracePaths.size(), qsizetype(2));
        QVERIFY(run.row.measured.peakAllocatedBytes && run.row.measured.baseline);
        QVERIFY(*run.row.measured.peakAllocatedBytes < *run.row.measured.baseline->peakAllocatedBytes);
        QVERIFY(run.row.measured.gradients && run.row.measured.gradients->agree);
    }

    std::unique_ptr<test::SshHost> m_host;
};

QTEST_MAIN(tst_RemoteWindow)
#include "tst_remotewindow.moc"
