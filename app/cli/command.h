// SPDX-License-Identifier: Apache-2.0
#pragma once
// The subcommands of peaklens-cli. Each adds itself to the CLI11 app and returns what to
// run once the arguments are parsed.

#include "core/error.h"
#include "core/trace/units.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
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

// A whole number from `low` to `high`, refused as people write numbers (CLI11's own ranges
// print both ends as floating point).
inline CLI::Validator wholeNumber(std::int64_t low, std::int64_t high = std::numeric_limits<std::int64_t>::max())
{
    const std::string range = high == std::numeric_limits<std::int64_t>::max()
                                  ? "of at least " + std::to_string(low)
                                  : "from " + std::to_string(low) + " to " + std::to_string(high);
    return CLI::Validator(
        [low, high, range](std::string &text) -> std::string {
            std::int64_t value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (error != std::errc() || end != text.data() + text.size() || value < low || value > high)
                return "\"" + text + "\" is not a whole number " + range;
            return {};
        },
        "");
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
Command addRerunCommand(CLI::App &app);
Command addQueryCommand(CLI::App &app);
Command addSendCommand(CLI::App &app);

} // namespace peaklens::cli
