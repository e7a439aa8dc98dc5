#pragma once
// Small helpers shared by the Qt Test suites: std::string <-> QString, and traces from text.

#include "core/trace/tracetext.h"

#include <QProcess>
#include <QString>
#include <QTest>

#include <string>

namespace peaklens::test {

inline QString qs(const std::string &text)
{
    return QString::fromStdString(text);
}

inline std::string ss(const QString &text)
{
    return text.toStdString();
}

inline std::shared_ptr<const Trace> traceFrom(const QString &text)
{
    return parseTraceText(ss(text));
}

// What one of the project's programs (in build/bin) printed and returned.
struct ToolRun
{
    int exitCode = -1; // -1: did not finish within the time or crashed
    QByteArray out;
    QByteArray err;
};

inline ToolRun runTool(const QString &program, const QStringList &arguments, int timeoutMs = 120000)
{
    QProcess process;
    process.start(QStringLiteral(PEAKLENS_BIN_DIR "/") + program, arguments);
    ToolRun run;
    if (!process.waitForFinished(timeoutMs) || process.exitStatus() != QProcess::NormalExit)
        return run;
    run.exitCode = process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

} // namespace peaklens::test
