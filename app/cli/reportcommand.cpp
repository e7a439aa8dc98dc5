// SPDX-License-Identifier: Apache-2.0
// peaklens-cli report FILE [FILE...] [--budget B] -o OUT.(html|csv|json) [--table T]
// A report of one trace, or of several compared with the first (docs/cli.md).

#include "command.h"
#include "commandtrace.h"

#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/report/htmlreport.h"
#include "core/report/tablereport.h"
#include "core/trace/units.h"

#include <filesystem>
#include <memory>

namespace peaklens::cli {

Command addReportCommand(CLI::App &app)
{
    auto *command =
        app.add_subcommand("report", "Write an HTML, CSV or JSON report of one trace, or of runs compared with the first");
    struct Options
    {
        std::vector<std::string> inputs;
        std::string output;
        std::string budget;
        std::string table = "layers";
        bool force = false;
    };
    auto options = std::make_shared<Options>();
    command->add_option("FILE", options->inputs, "Traces; the first is the baseline the others are compared with")->required();
    command->add_option("-o,--output", options->output, "OUT.html, OUT.csv or OUT.json")->required();
    command
        ->add_option("--budget", options->budget, "Memory budget for the planner's optimum, e.g. 6GiB (default: 75% of the peak)")
        ->type_name("SIZE");
    command->add_option("--table", options->table, "CSV only: layers, plans, sites or events")
        ->check(CLI::IsMember({"layers", "plans", "sites", "events"}));
    command->add_flag("--force", options->force, "Replace OUT if it exists (atomically, never in place)");
    return {command, [options] {
                const std::string extension = std::filesystem::path(options->output).extension().string();
                if (extension == ".pdf")
                    throw FileError(options->output, "must end in .html, .csv or .json here; the app writes PDF: "
                                                     "peaklens --export-report "
                                                         + options->output + " FILE.");
                if (extension != ".html" && extension != ".csv" && extension != ".json")
                    throw FileError(options->output, "must end in .html, .csv or .json, which says what to write.");
                std::optional<std::int64_t> budget;
                if (!options->budget.empty())
                    budget = parseBudget(options->budget);
                // Checked before the slow load, and again, atomically, when the report is moved into place.
                OutputFile output(options->output, options->force ? OutputFile::Existing::Replace : OutputFile::Existing::Refuse,
                                  options->inputs);
                std::vector<ReportInput> runs;
                for (const std::string &input : options->inputs)
                    runs.push_back({input, openForCommand(input), std::nullopt});
                const ReportData data = buildReport(runs, budget);
                if (extension == ".csv") {
                    const CsvTable table = options->table == "plans"    ? CsvTable::Plans
                                           : options->table == "sites"  ? CsvTable::Sites
                                           : options->table == "events" ? CsvTable::Events
                                                                        : CsvTable::Layers;
                    output.write([&](std::ostream &out) { writeCsvReport(data, table, out); });
                } else {
                    output.write(extension == ".html" ? renderHtmlReport(data) : renderJsonReport(data));
                }
                std::error_code ec;
                const auto bytes = std::filesystem::file_size(options->output, ec);
                return "wrote " + options->output + " (" + formatBytes(ec ? 0 : static_cast<std::int64_t>(bytes)) + ")\n";
            }};
}

} // namespace peaklens::cli
