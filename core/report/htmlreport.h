#pragma once
// The report as one self-contained HTML file: inline CSS and SVG charts, no scripts, no
// fonts or images from anywhere else, well-formed XML so any parser reads it, and a
// print stylesheet so it prints (or saves as PDF) cleanly.

#include "reportdata.h"

#include <string>

namespace peaklens {

std::string renderHtmlReport(const ReportData &data);

// Text for HTML/XML: & < > " ' escaped.
std::string escapeHtml(std::string_view text);

} // namespace peaklens
