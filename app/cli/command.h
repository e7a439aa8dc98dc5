#pragma once
// The subcommands of peaklens-cli. Each adds itself to the CLI11 app and returns what to
// run once the arguments are parsed.

#include "core/error.h"
#include "core/trace/units.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace peaklens::cli {

// What a command prints on stdout, and the exit code (0, or a recorded command's own).
struct CommandOutput
{
    CommandOutput(std::string text, int exitCode = 0) // NOLINT: commands return plain text
        : text(std::move(text))
        , exitCode(exitCode)
    {
    }
    std::string text;
    int exitCode = 0;
};

// A memory budget such as "6GiB"; throws Error with a sentence for anything else.
inline std::int64_t parseBudget(const std::string &text)
{
    const auto bytes = parseBytes(text);
    if (!bytes || *bytes <= 0)
        throw Error("\"" + text + "\" is not a budget; write it like 6GiB or 512MiB.");
    return *bytes;
}

struct Command
{
    CLI::App *subcommand;
    std::function<CommandOutput()> run;
};

Command addInfoCommand(CLI::App &app);
Command addSummaryCommand(CLI::App &app);
Command addDiffCommand(CLI::App &app);
Command addConvertCommand(CLI::App &app);
Command addPlanCommand(CLI::App &app);
Command addParetoCommand(CLI::App &app);
Command addReportCommand(CLI::App &app);
Command addRecordCommand(CLI::App &app);
Command addWatchCommand(CLI::App &app);

} // namespace peaklens::cli
