// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Writes a report from the app: PDF through Qt's PDF writer (the HTML report laid out by
// Qt's rich text, its SVG charts rendered as pictures), or HTML, CSV and JSON as
// peaklens-cli writes them. The format follows the file's extension.

#include "jobs.h"
#include "runrecord.h"

#include "core/format/outputfile.h"
#include "core/report/reportdata.h"

#include <QObject>
#include <QString>

#include <string>
#include <vector>

namespace peaklens::gui {

// Throws FileError naming `path` unless its extension names a format the app writes:
// checked before anything is loaded or rendered.
void checkReportPath(const QString &path);
// Writes the report in the format `output`'s extension names, complete or not at all.
// Throws peaklens::Error (FileError naming the path) when it cannot be written.
void exportReport(const ReportData &data, OutputFile &output);

// The window's report, written on a worker thread: the open trace as the baseline and each
// measured rerun compared with it, with the figures the Runs table shows, not analysed again.
class ReportWriter final : public QObject
{
    Q_OBJECT

public:
    explicit ReportWriter(QObject *parent = nullptr);

    bool isWriting() const { return m_jobs.isRunning(); }
    // Replaces `path` (the file dialog asked before); never writes onto the trace, a run's
    // trace or any of `open`, the other files the window has open. written follows.
    void write(const QString &path, const DocumentPtr &trace, const std::vector<RunRecord> &runs, std::vector<std::string> open);

Q_SIGNALS:
    // `problem` is empty once the report is written.
    void written(const QString &path, const QString &problem);

private:
    Jobs m_jobs;
};

} // namespace peaklens::gui
