// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Writes a report from the app: PDF through Qt's PDF writer (the HTML report laid out by
// Qt's rich text, its SVG charts rendered as pictures), or HTML, CSV and JSON as
// peaklens-cli writes them. The format follows the file's extension.

#include "core/format/outputfile.h"
#include "core/report/reportdata.h"

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

} // namespace peaklens::gui
