// peaklens-cli: inspect, summarise and convert memory traces from the command line.
// Exit codes: 0 success, 2 bad input or usage (one sentence on stderr, nothing on stdout).

#include "command.h"

#include "core/error.h"
#include "core/trace/visibletext.h"

#include <iostream>
#include <new>

int main(int argc, char **argv)
{
    CLI::App app("PeakLens: memory profiler for deep-learning training", "peaklens-cli");
    app.set_version_flag("--version", std::string("peaklens-cli ") + PEAKLENS_VERSION);
    app.require_subcommand(1);
    const peaklens::cli::Command commands[] = {
        peaklens::cli::addInfoCommand(app),
        peaklens::cli::addSummaryCommand(app),
        peaklens::cli::addConvertCommand(app),
        peaklens::cli::addPlanCommand(app),
        peaklens::cli::addParetoCommand(app),
        peaklens::cli::addReportCommand(app),
        peaklens::cli::addRecordCommand(app),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &error) {
        return app.exit(error) == 0 ? 0 : 2;
    }
    for (const auto &command : commands) {
        if (!command.subcommand->parsed())
            continue;
        try {
            // Printed all at once, so a failure never leaves partial output behind.
            const peaklens::cli::CommandOutput output = command.run();
            std::cout << output.text << std::flush;
            return output.exitCode;
        } catch (const peaklens::Error &error) {
            // One line, whatever a file's name or content put into the message.
            std::cerr << "peaklens-cli: " << peaklens::visibleText(error.what()) << '\n';
        } catch (const std::bad_alloc &) {
            std::cerr << "peaklens-cli: " << command.subcommand->get_name() << " ran out of memory.\n";
        } catch (const std::exception &error) {
            std::cerr << "peaklens-cli: " << command.subcommand->get_name()
                      << " failed: " << peaklens::visibleText(error.what()) << '\n';
        }
        return 2;
    }
    return 2;
}
