// SPDX-License-Identifier: Apache-2.0
// The bash and zsh completion the build writes for peaklens-cli, run in the shells
// themselves, in a folder of known files.

#include "clihelptext.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace peaklens;

namespace {

const QString kBashScript = QStringLiteral(PEAKLENS_BIN_DIR "/../share/bash-completion/completions/peaklens-cli");
const QString kZshScript = QStringLiteral(PEAKLENS_BIN_DIR "/../share/zsh/vendor-completions/_peaklens-cli");

struct Completion
{
    int exitCode = -1;
    QStringList matches; // sorted, each once
    QString error;
};

Completion run(const QString &program, const QStringList &arguments, const QString &directory)
{
    QProcess process;
    process.setWorkingDirectory(directory);
    process.start(program, arguments);
    Completion completion;
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit)
        return completion;
    completion.exitCode = process.exitCode();
    completion.matches = QString::fromUtf8(process.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    completion.matches.sort();
    completion.matches.removeDuplicates();
    completion.error = QString::fromUtf8(process.readAllStandardError());
    return completion;
}

// "peaklens-cli " and the rest of the line typed, up to the cursor.
QString commandLine(const char *rest)
{
    return QStringLiteral("peaklens-cli ") + QString::fromLatin1(rest);
}

// Words, sorted, as a completion's matches are compared.
QStringList wordsOf(const char *text)
{
    QStringList words = QString::fromLatin1(text).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    words.sort();
    return words;
}

bool containsAll(const QStringList &matches, const QStringList &expected)
{
    for (const QString &word : expected) {
        if (!matches.contains(word))
            return false;
    }
    return true;
}

} // namespace

class tst_Completion : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_folder;       // the files a file name completes to
    QTemporaryDir m_zshFunctions; // the folder in zsh's $fpath
    QString m_bashDriver;
    QString m_zshDriver;
    QString m_zsh;

    Completion completeInBash(const QStringList &words) const
    {
        return run(QStringLiteral("bash"),
                   QStringList{QStringLiteral("--norc"), QStringLiteral("--noprofile"), m_bashDriver, kBashScript} + words,
                   m_folder.path());
    }

    Completion completeInZsh(const QString &line) const
    {
        return run(m_zsh, {QStringLiteral("-f"), m_zshDriver, m_zshFunctions.path(), line}, m_folder.path());
    }

    void requireZsh()
    {
        if (m_zsh.isEmpty())
            QSKIP("zsh is not installed");
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(kBashScript), qPrintable(kBashScript + QStringLiteral(" was not built")));
        QVERIFY2(QFile::exists(kZshScript), qPrintable(kZshScript + QStringLiteral(" was not built")));
        QVERIFY(m_folder.isValid());
        for (const char *name : {"trace-a.peaklens", "trace-b.peaklens", "notes.txt"}) {
            QFile file(m_folder.filePath(QString::fromLatin1(name)));
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        QVERIFY(QDir(m_folder.path()).mkpath(QStringLiteral("runs")));

        m_bashDriver = QFINDTESTDATA("completion/complete.bash");
        m_zshDriver = QFINDTESTDATA("completion/complete.zsh");
        QVERIFY(!m_bashDriver.isEmpty() && !m_zshDriver.isEmpty());
        // zsh's completion reads _peaklens-cli from a folder in $fpath.
        m_zsh = QStandardPaths::findExecutable(QStringLiteral("zsh"));
        QVERIFY(m_zshFunctions.isValid());
        QVERIFY(QFile::copy(kZshScript, m_zshFunctions.filePath(QStringLiteral("_peaklens-cli"))));
    }

    void scriptsAreWhatTheProgramPrints_data()
    {
        QTest::addColumn<QString>("shell");
        QTest::addColumn<QString>("path");
        QTest::addRow("bash") << QStringLiteral("bash") << kBashScript;
        QTest::addRow("zsh") << QStringLiteral("zsh") << kZshScript;
    }

    void scriptsAreWhatTheProgramPrints()
    {
        QFETCH(QString, shell);
        QFETCH(QString, path);
        const auto printed = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("--completion"), shell});
        QCOMPARE(printed.exitCode, 0);
        QVERIFY(printed.err.isEmpty());
        QFile built(path);
        QVERIFY(built.open(QIODevice::ReadOnly));
        QCOMPARE(built.readAll(), printed.out);
    }

    void completionOptionIsHiddenAndChecked()
    {
        const auto help = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(!help.out.contains("--completion"));
        const auto fish = test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("--completion"), QStringLiteral("fish")});
        QCOMPARE(fish.exitCode, 2);
        QVERIFY(fish.out.isEmpty());
        QVERIFY(fish.err.contains("fish"));
    }

    void bashCompletes_data()
    {
        QTest::addColumn<QStringList>("words"); // the last one is completed
        QTest::addColumn<QStringList>("expected");
        QTest::addColumn<bool>("whole"); // false: among others, such as the commands on PATH

        const auto row = [](const char *what, const char *line, const char *expected, bool whole = true) {
            QTest::addRow("%s", what) << commandLine(line).split(QLatin1Char(' ')) << wordsOf(expected) << whole;
        };
        row("subcommand from its start", "su", "summary");
        row("option before the subcommand", "--v", "--version");
        row("--completion stays hidden", "--c", "");
        row("option of the subcommand", "summary --j", "--json");
        row("no option of another subcommand", "diff --f", "");
        row("an option after another's value", "plan --budget 1GiB --j", "--json");
        row("record's options, and --", "record -", "-- --allocator --backend --directory --help --host --out -h");
        row("choices of --backend", "record --backend ", "auto cupti torch");
        row("choices of --allocator", "record --allocator ", "async exact native");
        row("choices after --allocator=, split at =", "record --allocator = ", "async exact native");
        row("a choice after --allocator=, split at =", "record --allocator = as", "async");
        row("a choice in --allocator=as, one word", "record --allocator=as", "--allocator=async");
        row("choices of report --table", "report --table s", "sites");
        row("nothing for a number", "summary --top ", "");
        row("nothing after a flag's =", "summary --json = ", "");
        row("no files for a strategy", "plan trace-a.peaklens --strategy ", "");
        row("no files for a budget", "plan trace-a.peaklens --budget no", "");
        row("files in the folder", "summary ", "notes.txt runs trace-a.peaklens trace-b.peaklens");
        row("files a prefix begins", "summary tr", "trace-a.peaklens trace-b.peaklens");
        row("a file after a flag", "summary --json tr", "trace-a.peaklens trace-b.peaklens");
        row("a file after a number's value", "summary --top 5 tr", "trace-a.peaklens trace-b.peaklens");
        row("diff's second trace", "diff trace-a.peaklens trace-", "trace-a.peaklens trace-b.peaklens");
        row("a file for -o", "report -o no", "notes.txt");
        row("a folder for record --out", "record --out ru", "runs");
        row("record's training command after --", "record -- bas", "bash", false);
        row("record's training command after an option", "record --allocator native bas", "bash", false);
        row("files for the training command's arguments", "record -- bash no", "notes.txt");
    }

    void bashCompletes()
    {
        QFETCH(QStringList, words);
        QFETCH(QStringList, expected);
        QFETCH(bool, whole);
        const Completion completion = completeInBash(words);
        QCOMPARE(completion.exitCode, 0);
        QCOMPARE(completion.error, QString());
        if (whole)
            QCOMPARE(completion.matches, expected);
        else
            QVERIFY2(containsAll(completion.matches, expected), qPrintable(completion.matches.join(QLatin1Char(' '))));
    }

    // Against what --help says, so that neither can drift from the other.
    void bashOffersEverySubcommand()
    {
        QStringList subcommands = test::subcommandsFromHelp();
        QVERIFY(subcommands.contains(QStringLiteral("summary")));
        QVERIFY(subcommands.contains(QStringLiteral("watch")));
        subcommands.sort();
        const Completion completion = completeInBash({QStringLiteral("peaklens-cli"), QString()});
        QCOMPARE(completion.exitCode, 0);
        QCOMPARE(completion.matches, subcommands);
    }

    void bashOffersEveryOption_data()
    {
        QTest::addColumn<QString>("subcommand");
        for (const QString &subcommand : test::subcommandsFromHelp())
            QTest::addRow("%s", qPrintable(subcommand)) << subcommand;
    }

    void bashOffersEveryOption()
    {
        QFETCH(QString, subcommand);
        QStringList options = test::optionsFromHelp(subcommand);
        QVERIFY(options.contains(QStringLiteral("--help")));
        const Completion completion = completeInBash({QStringLiteral("peaklens-cli"), subcommand, QStringLiteral("-")});
        QCOMPARE(completion.exitCode, 0);
        QStringList offered = completion.matches;
        offered.removeOne(QStringLiteral("--")); // record's end of options
        options.sort();
        QCOMPARE(offered, options);
    }

    void zshParsesScript()
    {
        requireZsh();
        QProcess zsh;
        zsh.start(m_zsh, {QStringLiteral("-n"), kZshScript});
        QVERIFY(zsh.waitForFinished(30000));
        QCOMPARE(zsh.readAllStandardError(), QByteArray());
        QCOMPARE(zsh.exitCode(), 0);
    }

    void zshCompletes_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QStringList>("expected");
        QTest::addColumn<bool>("whole");

        const auto row = [](const char *what, const char *line, const char *expected, bool whole = true) {
            QTest::addRow("%s", what) << commandLine(line) << wordsOf(expected) << whole;
        };
        row("subcommand from its start", "su", "summary");
        row("option of the subcommand", "summary --j", "--json");
        row("choices of --allocator", "record --allocator ", "async exact native");
        row("a choice after --allocator=", "record --allocator=as", "async");
        row("choices of report --table", "report --table s", "sites");
        row("files in the folder", "summary ", "notes.txt runs trace-a.peaklens trace-b.peaklens");
        row("files a prefix begins", "summary tr", "trace-a.peaklens trace-b.peaklens");
        row("an option plan allows alone", "plan --ov", "--overhead");
        row("no option --budget excludes", "plan --budget 1GiB --ov", "");
        row("record's training command after --", "record -- bas", "bash", false);
    }

    void zshCompletes()
    {
        requireZsh();
        QFETCH(QString, line);
        QFETCH(QStringList, expected);
        QFETCH(bool, whole);
        const Completion completion = completeInZsh(line);
        if (completion.exitCode == 3)
            QSKIP("zsh has no zpty module");
        QCOMPARE(completion.exitCode, 0);
        if (whole)
            QCOMPARE(completion.matches, expected);
        else
            QVERIFY2(containsAll(completion.matches, expected), qPrintable(completion.matches.join(QLatin1Char(' '))));
    }

    void zshOffersEverySubcommand()
    {
        requireZsh();
        QStringList subcommands = test::subcommandsFromHelp();
        QVERIFY(subcommands.contains(QStringLiteral("summary")));
        subcommands.sort();
        const Completion completion = completeInZsh(QStringLiteral("peaklens-cli "));
        if (completion.exitCode == 3)
            QSKIP("zsh has no zpty module");
        QCOMPARE(completion.exitCode, 0);
        QCOMPARE(completion.matches, subcommands);
    }
};

QTEST_GUILESS_MAIN(tst_Completion)
#include "tst_completion.moc"
