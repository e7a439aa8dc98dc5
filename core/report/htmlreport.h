// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report as one self-contained HTML file: inline CSS and SVG charts, no scripts, no
// fonts or images from anywhere else, well-formed XML so any parser reads it, and a
// print stylesheet so it prints (or saves as PDF) cleanly.

#include "reportdata.h"

#include <string>
#include <vector>

namespace peaklens {

std::string renderHtmlReport(const ReportData &data);

// The same report with each chart as <img src="chart:N"/> and the charts apart, as
// standalone SVG documents: for renderers without inline SVG (Qt's rich text, for PDF).
struct HtmlWithCharts
{
    std::string html;
    std::vector<std::string> charts;
};
HtmlWithCharts renderHtmlReportWithChartImages(const ReportData &data);

// Text for HTML/XML: & < > " ' escaped.
std::string escapeHtml(std::string_view text);

} // namespace peaklens
