#pragma once
// The subcommands of peaklens-cli. Each adds itself to the CLI11 app and returns what to
// run once the arguments are parsed.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace peaklens::cli {

struct Command
{
    CLI::App *subcommand;
    std::function<std::string()> run; // returns what to print on stdout
};

Command addInfoCommand(CLI::App &app);
Command addSummaryCommand(CLI::App &app);
Command addConvertCommand(CLI::App &app);
Command addPlanCommand(CLI::App &app);
Command addParetoCommand(CLI::App &app);
Command addReportCommand(CLI::App &app);

} // namespace peaklens::cli
