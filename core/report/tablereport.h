// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report as data for other tools: CSV tables (layers, plans, allocation sites at the
// peak, or every memory event)
// and one JSON object (summary, plans and comparison; schema in docs/cli.md).

#include "reportdata.h"

#include <iosfwd>
#include <string>

namespace peaklens {

enum class CsvTable { Layers, Plans, Sites, Events };

// One table for the runs of the report; every row names its trace in the first column.
// Written as it is made: the events table of a large trace runs to gigabytes.
void writeCsvReport(const ReportData &data, CsvTable table, std::ostream &out);
std::string renderCsvReport(const ReportData &data, CsvTable table);
std::string renderJsonReport(const ReportData &data);

// A CSV field, quoted when it must be; text that a spreadsheet would run as a formula
// (= + - @ first) is prefixed with '.
std::string csvField(std::string_view text);

} // namespace peaklens
