// SPDX-License-Identifier: GPL-3.0-or-later
// A distributed run recorded into one folder opens from that folder: every rank listed in
// the selector and the Ranks pane, ranks in order. The recorded rows run the real
// `peaklens-cli record` and collector with the CUDA stand-ins (tests/plugins/cupti/standin),
// launched as torchrun and as srun launch a run; the written row needs no collector.

#include "standinenvironment.h"
#include "testsupport.h"

#include "core/format/tracewriter.h"
#include "core/trace/metadata.h"
#include "mainwindow.h"
#include "models/ranksmodel.h"
#include "tracedocument.h"
#include "widgets/rankspane.h"

#include <QComboBox>
#include <QDir>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace peaklens;
using namespace peaklens::gui;
using namespace peaklens::test;

namespace {

constexpr int kRanks = 4;

#ifdef PEAKLENS_STANDIN_DIR
QProcessEnvironment standinEnvironment()
{
    return peaklens::test::standinEnvironment(QStringLiteral(PEAKLENS_STANDIN_DIR));
}
#else
// Without the stand-ins the recorded rows are skipped before anything runs.
QProcessEnvironment standinEnvironment()
{
    return QProcessEnvironment::systemEnvironment();
}
#endif

QStringList recordArguments(const QString &out)
{
    return {QStringLiteral("record"),
            QStringLiteral("--backend"),
            QStringLiteral("cupti"),
            QStringLiteral("--out"),
            out,
            QStringLiteral("--"),
            QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-test-trainer"),
            QStringLiteral("--steps"),
            QStringLiteral("2"),
            QStringLiteral("--layers"),
            QStringLiteral("3")};
}

// torchrun: one `record` around a launcher that starts every rank with RANK, LOCAL_RANK
// and WORLD_SIZE (the trainer's --ranks does what torchrun does).
QString recordAsTorchrun(const QString &out)
{
    QProcess record;
    record.setProcessEnvironment(standinEnvironment());
    record.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"),
                 recordArguments(out) + QStringList{QStringLiteral("--ranks"), QString::number(kRanks)});
    if (!record.waitForFinished(120000) || record.exitCode() != 0)
        return QString::fromUtf8(record.readAllStandardError());
    return {};
}

// srun: one `record` per task, each with Slurm's variables, two tasks per node, all into
// one shared folder at once.
QString recordAsSrun(const QString &out)
{
    std::vector<std::unique_ptr<QProcess>> tasks;
    for (int task = 0; task < kRanks; ++task) {
        QProcessEnvironment environment = standinEnvironment();
        environment.insert(QStringLiteral("SLURM_PROCID"), QString::number(task));
        environment.insert(QStringLiteral("SLURM_LOCALID"), QString::number(task % 2));
        environment.insert(QStringLiteral("SLURM_NTASKS"), QString::number(kRanks));
        environment.insert(QStringLiteral("SLURMD_NODENAME"), QStringLiteral("node%1").arg(task / 2));
        auto &process = tasks.emplace_back(std::make_unique<QProcess>());
        process->setProcessEnvironment(environment);
        process->start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"), recordArguments(out));
    }
    for (auto &task : tasks) {
        if (!task->waitForFinished(120000) || task->exitCode() != 0)
            return QString::fromUtf8(task->readAllStandardError());
    }
    return {};
}

// Rank files written directly, as a collector would leave them: no collector needed.
QString writeRanks(const QString &out)
{
    const TracePtr sample = traceFrom(stepText(0, 10, 20));
    for (int rank = 0; rank < kRanks; ++rank) {
        Trace trace = *sample;
        trace.meta[std::string(metakey::Rank)] = std::to_string(rank);
        trace.meta[std::string(metakey::WorldSize)] = std::to_string(kRanks);
        trace.meta[std::string(metakey::ProcessId)] = std::to_string(100 + rank);
        TraceWriter::writeTrace(
            trace, QDir(out).filePath(QStringLiteral("rank%1-pid%2.peaklens").arg(rank).arg(100 + rank)).toStdString());
    }
    return {};
}

} // namespace

class tst_RankFolder : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // Recent files of this test stay out of the user's settings.
        QStandardPaths::setTestModeEnabled(true);
    }

    void opensEveryRankOfItsFolder_data()
    {
        QTest::addColumn<QString>("launch");
        QTest::addRow("recorded, torchrun") << QStringLiteral("torchrun");
        QTest::addRow("recorded, srun on two nodes") << QStringLiteral("srun");
        QTest::addRow("written rank files") << QStringLiteral("written");
    }

    void opensEveryRankOfItsFolder()
    {
        QFETCH(QString, launch);
#ifndef PEAKLENS_STANDIN_DIR
        if (launch != QLatin1String("written"))
            QSKIP("the CUDA stand-ins are built only where the CUDA toolkit with CUPTI is installed");
#endif
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("run"));
        QVERIFY(QDir().mkpath(out));
        const QString problem = launch == QLatin1String("torchrun") ? recordAsTorchrun(out)
                                : launch == QLatin1String("srun")   ? recordAsSrun(out)
                                                                    : writeRanks(out);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(QDir(out).entryList({QStringLiteral("*.peaklens")}, QDir::Files).size(), kRanks);

        MainWindow window;
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openFile(out);
        QVERIFY(QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 120000));
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
        QCOMPARE(window.processes().size(), std::size_t(kRanks));
        auto *selector = window.findChild<QComboBox *>(QStringLiteral("processSelector"));
        QVERIFY(selector);
        QCOMPARE(selector->count(), kRanks);
        for (int rank = 0; rank < kRanks; ++rank)
            QVERIFY2(selector->itemText(rank).startsWith(QStringLiteral("rank %1 ").arg(rank)),
                     qPrintable(selector->itemText(rank)));
        QCOMPARE(window.ranksPane()->model()->rowCount(), kRanks);
        QCOMPARE(window.document()->trace->metaValue(metakey::Rank), std::string("0"));
        // Open Recent offers the folder, not one of its files.
        QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0), QFileInfo(out).absoluteFilePath());
    }

    void aFolderWithoutTracesSaysSo()
    {
        QTemporaryDir directory;
        MainWindow window;
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openFile(directory.path());
        QVERIFY(failed.wait(60000));
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains(directory.path()) && message.contains(QStringLiteral("no *.peaklens traces")),
                 qPrintable(message));
    }
};

QTEST_MAIN(tst_RankFolder)
#include "tst_rankfolder.moc"
