#pragma once
// Small helpers shared by the Qt Test suites: std::string <-> QString, and traces from text.

#include "core/trace/tracetext.h"

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

} // namespace peaklens::test
