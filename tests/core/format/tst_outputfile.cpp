// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/format/tracewriter.h"
#include "core/trace/tracetext.h"
#include "testsupport.h"
#include "tracefiledamage.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

QByteArray contentsOf(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<unreadable>");
}

// The id of a process that has exited and been reaped.
long deadProcessId()
{
    const pid_t child = ::fork();
    if (child == 0)
        ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
}

} // namespace

class tst_OutputFile : public QObject
{
    Q_OBJECT

private slots:
    // Every target PeakLens must not write to, and what it says; nothing there changes.
    void refusesTargets_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        QTest::addRow("the input") << QStringLiteral("input") << QStringLiteral("is one of the inputs");
        QTest::addRow("a symbolic link to the input") << QStringLiteral("link") << QStringLiteral("is one of the inputs");
        QTest::addRow("a hard link to the input") << QStringLiteral("hardlink") << QStringLiteral("is one of the inputs");
        QTest::addRow("a character device") << QStringLiteral("/dev/null") << QStringLiteral("is a character device");
        QTest::addRow("a directory") << QStringLiteral("folder") << QStringLiteral("is a directory");
        QTest::addRow("a FIFO") << QStringLiteral("fifo") << QStringLiteral("is a pipe");
        QTest::addRow("an existing file, not to be replaced") << QStringLiteral("existing") << QStringLiteral("already exists");
    }
    void refusesTargets()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString input = dir.filePath(QStringLiteral("input"));
        test::writeBytes(input, "the trace");
        test::writeBytes(dir.filePath(QStringLiteral("existing")), "keep me");
        QVERIFY(QFile::link(input, dir.filePath(QStringLiteral("link"))));
        QCOMPARE(::link(qPrintable(input), qPrintable(dir.filePath(QStringLiteral("hardlink")))), 0);
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("folder")));
        QCOMPARE(::mkfifo(qPrintable(dir.filePath(QStringLiteral("fifo"))), 0600), 0);
        const QString path = target.startsWith(QLatin1Char('/')) ? target : dir.filePath(target);
        const QStringList before = QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System);
        const auto existing = target == QLatin1String("existing") ? OutputFile::Existing::Refuse : OutputFile::Existing::Replace;
        try {
            OutputFile(ss(path), existing, {ss(input)}).write("a report");
            QFAIL("the target was accepted");
        } catch (const FileError &error) {
            QVERIFY2(qs(error.what()).startsWith(path + QStringLiteral(": ")), error.what());
            QVERIFY2(qs(error.what()).contains(problem), error.what());
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System), before);
        QCOMPARE(contentsOf(input), QByteArray("the trace"));
        QCOMPARE(contentsOf(dir.filePath(QStringLiteral("existing"))), QByteArray("keep me"));
        struct stat status
        { };
        QVERIFY(::stat("/dev/null", &status) == 0 && S_ISCHR(status.st_mode));
    }

    // Past the file-size limit (ulimit -f): one sentence naming the target, no signal, no
    // temporary left, and the file that was there untouched. Each way of writing a file.
    void fileSizeLimitIsOneSentence_data()
    {
        QTest::addColumn<QString>("writer");
        QTest::newRow("whole contents") << QStringLiteral("contents");
        QTest::newRow("streamed contents") << QStringLiteral("stream");
        QTest::newRow("a native trace") << QStringLiteral("trace");
    }
    void fileSizeLimitIsOneSentence()
    {
        QFETCH(QString, writer);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.peaklens"));
        test::writeBytes(path, "keep me");
        const std::string large(1 << 20, 'x');
        const auto trace = parseTraceText("alloc a 5\nfree a\n");
        // A child process, so the lowered limit and the ignored signal stay there.
        const pid_t child = ::fork();
        if (child == 0) {
            const rlimit limit{64 * 1024, 64 * 1024};
            ::setrlimit(RLIMIT_FSIZE, &limit);
            int code = 3;
            try {
                OutputFile output(ss(path), OutputFile::Existing::Replace);
                if (writer == QLatin1String("contents"))
                    output.write(large);
                else if (writer == QLatin1String("stream"))
                    output.write([&](std::ostream &out) { out << large; });
                else {
                    auto big = std::make_shared<Trace>(*trace);
                    big->meta["padding"] = large;
                    TraceWriter::writeTrace(*big, output);
                }
            } catch (const FileError &error) {
                const std::string text = error.what();
                code = text.starts_with(ss(path) + ": ") && text.find("ulimit -f") != std::string::npos
                               && text.find('\n') == std::string::npos
                           ? 0
                           : 4;
            }
            ::_exit(code);
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY2(WIFEXITED(status), "killed by a signal (SIGXFSZ?)");
        QCOMPARE(WEXITSTATUS(status), 0);
        QCOMPARE(contentsOf(path), QByteArray("keep me"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("out.peaklens")});
    }

    // Two writers that both found no file: the first to finish wins, the second says so and
    // leaves the first one's file as it is.
    void aFileThatAppearsMeanwhileIsKept()
    {
        QTemporaryDir dir;
        const std::string path = ss(dir.filePath(QStringLiteral("out.peaklens")));
        OutputFile first(path, OutputFile::Existing::Refuse);
        OutputFile second(path, OutputFile::Existing::Refuse);
        QVERIFY(first.temporary() != second.temporary());
        first.write("first");
        try {
            second.write("second");
            QFAIL("the second writer replaced the first one's file");
        } catch (const FileError &error) {
            QVERIFY2(qs(error.what()).contains(QStringLiteral("appeared while PeakLens was writing it")), error.what());
        }
        QCOMPARE(contentsOf(qs(path)), QByteArray("first"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("out.peaklens")});
    }

    void anAbandonedWriteLeavesNothing()
    {
        QTemporaryDir dir;
        const std::string path = ss(dir.filePath(QStringLiteral("out.html")));
        {
            OutputFile output(path, OutputFile::Existing::Replace);
            test::writeBytes(qs(output.temporary()), "half a report");
        }
        QVERIFY(QDir(dir.path()).isEmpty());
    }

    // A killed writer's temporary goes on the next write to the same place; a live one's stays.
    void staleTemporariesOfDeadProcessesAreRemoved()
    {
        QTemporaryDir dir;
        const QString name = QStringLiteral("out.peaklens");
        const long dead = deadProcessId();
        const QString deadPartial = qs(OutputFile::temporaryName(ss(name), dead, 0));
        const QString deadOldStyle = name + QStringLiteral(".tmp-%1").arg(dead);
        const QString live = qs(OutputFile::temporaryName(ss(name), ::getppid(), 3));
        const QString unrelated = QStringLiteral("other.peaklens.partial-%1-0").arg(dead);
        for (const QString &file : {deadPartial, deadOldStyle, live, unrelated})
            test::writeBytes(dir.filePath(file), "843 MB of it");
        OutputFile(ss(dir.filePath(name)), OutputFile::Existing::Replace).write("done");
        QStringList expected{live, name, unrelated};
        expected.sort();
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files, QDir::Name), expected);
    }

    // A name of 255 bytes, the most a file system allows: the temporary still fits.
    void longestNameIsWritten()
    {
        QTemporaryDir dir;
        const QString name = QString(250, QLatin1Char('n')) + QStringLiteral(".json");
        const QString path = dir.filePath(name);
        OutputFile(ss(path), OutputFile::Existing::Refuse).write("{}");
        QCOMPARE(contentsOf(path), QByteArray("{}"));
        QVERIFY(OutputFile::temporaryName(ss(name), 4194304, 4000000000u).size() <= 255);
    }

    // What the cache's limit leaves alone: a file some process is still writing.
    void aTemporaryIsKnownByItsName_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("temporary");
        QTest::addRow("made now") << qs(OutputFile::temporaryName("run.peaklens", 4242, 7)) << true;
        QTest::addRow("a long name, shortened") << qs(OutputFile::temporaryName(std::string(300, 'n'), 4194304, 1)) << true;
        QTest::addRow("an earlier release's") << QStringLiteral("report.html.tmp-4242") << true;
        QTest::addRow("the finished file") << QStringLiteral("run.peaklens") << false;
        QTest::addRow("the tag and no writer") << QStringLiteral("notes.partial-draft") << false;
        QTest::addRow("the tag in the middle") << QStringLiteral("a.partial-12.peaklens") << false;
    }
    void aTemporaryIsKnownByItsName()
    {
        QFETCH(QString, name);
        QFETCH(bool, temporary);
        QCOMPARE(OutputFile::isTemporaryName(ss(name)), temporary);
    }
};

QTEST_GUILESS_MAIN(tst_OutputFile)
#include "tst_outputfile.moc"
