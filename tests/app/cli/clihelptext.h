// SPDX-License-Identifier: Apache-2.0
#pragma once
// What peaklens-cli's own --help says it has: its subcommands, and each one's options. The
// completion and man page tests compare against these, so they fail when either drifts.

#include "testsupport.h"

#include <QRegularExpression>
#include <QStringList>

namespace peaklens::test {

// The lines of a --help section ("Subcommands:", "Options:") up to the blank line ending it.
inline QStringList helpSection(const QByteArray &help, const QString &heading)
{
    const QStringList lines = QString::fromUtf8(help).split(QLatin1Char('\n'));
    const qsizetype start = lines.indexOf(heading);
    QStringList section;
    for (qsizetype i = start < 0 ? lines.size() : start + 1; i < lines.size() && !lines[i].isEmpty(); ++i)
        section << lines[i];
    return section;
}

// The first word of each entry: an entry starts two spaces in, its wrapped text further in.
inline QStringList entryNames(const QStringList &section)
{
    static const QRegularExpression entry(QStringLiteral("^  (\\S+)"));
    QStringList names;
    for (const QString &line : section) {
        if (const auto match = entry.match(line); match.hasMatch())
            names << match.captured(1);
    }
    return names;
}

inline QStringList subcommandsFromHelp()
{
    return entryNames(
        helpSection(runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("--help")}).out, QStringLiteral("Subcommands:")));
}

// "-o,--output" counts as two options.
inline QStringList optionsFromHelp(const QString &subcommand)
{
    const auto help = runTool(QStringLiteral("peaklens-cli"), {subcommand, QStringLiteral("--help")}).out;
    QStringList options;
    for (const QString &names : entryNames(helpSection(help, QStringLiteral("Options:"))))
        options << names.split(QLatin1Char(','));
    return options;
}

} // namespace peaklens::test
