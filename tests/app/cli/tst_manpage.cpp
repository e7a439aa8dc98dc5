// SPDX-License-Identifier: Apache-2.0
// The man page the build writes for peaklens-cli from its --help and the tables of
// docs/cli.md, read as man reads it.

#include "clihelptext.h"

#include <QFile>
#include <QProcess>
#include <QStandardPaths>

using namespace peaklens;

namespace {

const QString kPage = QStringLiteral(PEAKLENS_BIN_DIR "/../share/man/man1/peaklens-cli.1");

// One section of the rendered page: from its heading (at the margin) to the next heading.
QString section(const QString &page, const QString &heading)
{
    const QRegularExpression pattern(QStringLiteral("^%1\\n(.*?)(?=^\\S)").arg(QRegularExpression::escape(heading)),
                                     QRegularExpression::MultilineOption | QRegularExpression::DotMatchesEverythingOption);
    return pattern.match(page).captured(1);
}

// The codes docs/cli.md's "Exit status" table gives peaklens-cli and its subcommands.
QStringList documentedExitCodes()
{
    QFile docs(QStringLiteral(PEAKLENS_SOURCE_DIR "/docs/cli.md"));
    if (!docs.open(QIODevice::ReadOnly))
        return {};
    const QString text = QString::fromUtf8(docs.readAll());
    const QString table = text.mid(text.indexOf(QStringLiteral("\n## Exit status\n")));
    static const QRegularExpression row(QStringLiteral("^\\| `peaklens-cli(?: [a-z]+)?` \\| ([^|]+) \\|"),
                                        QRegularExpression::MultilineOption);
    QStringList codes;
    for (auto match = row.globalMatch(table.left(table.indexOf(QStringLiteral("\n## "), 1))); match.hasNext();)
        codes << match.next().captured(1).trimmed();
    return codes;
}

} // namespace

class tst_ManPage : public QObject
{
    Q_OBJECT

private:
    QString m_rendered; // plain text, as man shows it without bold or underlining

private slots:
    void initTestCase()
    {
        if (!PEAKLENS_HAS_MAN_PAGES)
            QSKIP("help2man was not found when the build was configured: no man pages");
        QVERIFY2(QFile::exists(kPage), qPrintable(kPage + QStringLiteral(" was not built")));
        if (QStandardPaths::findExecutable(QStringLiteral("groff")).isEmpty())
            QSKIP("groff is not installed");
        QProcess groff;
        groff.start(QStringLiteral("groff"), {QStringLiteral("-k"), QStringLiteral("-man"), QStringLiteral("-Tutf8"),
                                              QStringLiteral("-ww"), QStringLiteral("-P-cbou"), kPage});
        QVERIFY(groff.waitForFinished(30000));
        QCOMPARE(groff.exitCode(), 0);
        // -k: the page is UTF-8, read as man reads it; -ww: every warning groff has, and the
        // page must give none.
        QCOMPARE(QString::fromUtf8(groff.readAllStandardError()), QString());
        m_rendered = QString::fromUtf8(groff.readAllStandardOutput());
        QVERIFY(m_rendered.contains(QLatin1String("peaklens-cli")));
    }

    void hasSections_data()
    {
        QTest::addColumn<QString>("heading");
        for (const char *heading :
             {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"})
            QTest::addRow("%s", heading) << QString::fromLatin1(heading);
    }

    void hasSections()
    {
        QFETCH(QString, heading);
        QVERIFY2(!section(m_rendered, heading).trimmed().isEmpty(), qPrintable(heading));
    }

    void documentsEverySubcommand_data()
    {
        QTest::addColumn<QString>("subcommand");
        const QStringList subcommands = test::subcommandsFromHelp();
        QVERIFY(subcommands.contains(QStringLiteral("record")));
        for (const QString &subcommand : subcommands)
            QTest::addRow("%s", qPrintable(subcommand)) << subcommand;
    }

    // A subsection of COMMANDS per subcommand, with its synopsis and every option its
    // --help lists.
    void documentsEverySubcommand()
    {
        QFETCH(QString, subcommand);
        const QString commands = section(m_rendered, QStringLiteral("COMMANDS"));
        const QRegularExpression subsection(QStringLiteral("^   %1\\n(.*?)(?=^   \\S|\\z)").arg(subcommand),
                                            QRegularExpression::MultilineOption | QRegularExpression::DotMatchesEverythingOption);
        const QString text = subsection.match(commands).captured(1);
        QVERIFY2(text.contains(QStringLiteral("peaklens-cli ") + subcommand + QStringLiteral(" [OPTIONS]")), qPrintable(text));
        for (const QString &option : test::optionsFromHelp(subcommand)) {
            if (option == QLatin1String("-h") || option == QLatin1String("--help"))
                continue; // said once for all of them
            QVERIFY2(text.contains(option), qPrintable(subcommand + QLatin1Char(' ') + option));
        }
    }

    // The same codes as the table in docs/cli.md, each at the margin of its item.
    void exitStatusIsTheDocumentedTable()
    {
        const QStringList codes = documentedExitCodes();
        for (const char *code : {"0", "2", "3", "127", "128 + N"})
            QVERIFY2(codes.contains(QString::fromLatin1(code)), code);
        const QString exitStatus = section(m_rendered, QStringLiteral("EXIT STATUS"));
        static const QRegularExpression item(QStringLiteral("^       (\\S.*?)(?:  |\\n)"), QRegularExpression::MultilineOption);
        QStringList shown;
        for (auto match = item.globalMatch(exitStatus); match.hasNext();)
            shown << match.next().captured(1);
        QCOMPARE(shown, codes);
        QVERIFY(exitStatus.contains(QLatin1String("watch: ")));
    }

    void environmentNamesThePluginFolder()
    {
        QVERIFY(section(m_rendered, QStringLiteral("ENVIRONMENT")).contains(QLatin1String("PEAKLENS_PLUGIN_DIR")));
        // The app's own variables stay on its page.
        QVERIFY(!section(m_rendered, QStringLiteral("ENVIRONMENT")).contains(QLatin1String("QT_QPA_PLATFORM")));
    }
};

QTEST_GUILESS_MAIN(tst_ManPage)
#include "tst_manpage.moc"
