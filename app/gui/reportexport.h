#pragma once
// Writes a report from the app: PDF through Qt's PDF writer (the HTML report laid out by
// Qt's rich text, its SVG charts rendered as pictures), or HTML, CSV and JSON as
// peaklens-cli writes them. The format follows the file's extension.

#include "core/report/reportdata.h"

#include <QString>

#include <string>
#include <vector>

namespace peaklens::gui {

// Throws peaklens::Error (FileError naming the path) when it cannot be written, or is one
// of `inputs` (the traces the report is made from).
void exportReport(const ReportData &data, const QString &path, const std::vector<std::string> &inputs);

} // namespace peaklens::gui
