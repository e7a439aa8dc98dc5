#include "clirunner.h"

#include "command.h"

#include "core/error.h"
#include "core/trace/visibletext.h"

#include <new>
#include <ostream>

namespace peaklens::cli {

int runCli(int argc, char **argv, std::ostream &out, std::ostream &err)
{
    CLI::App app("PeakLens: memory profiler for deep-learning training", "peaklens-cli");
    app.set_version_flag("--version", std::string("peaklens-cli ") + PEAKLENS_VERSION);
    app.require_subcommand(1);
    const Command commands[] = {
        addInfoCommand(app),
        addSummaryCommand(app),
        addConvertCommand(app),
        addPlanCommand(app),
        addParetoCommand(app),
        addReportCommand(app),
        addRecordCommand(app),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &error) {
        return app.exit(error, out, err) == 0 ? 0 : 2;
    }
    for (const auto &command : commands) {
        if (!command.subcommand->parsed())
            continue;
        try {
            // Printed all at once, so a failure never leaves partial output behind.
            const CommandOutput output = command.run();
            out << output.text << std::flush;
            return output.exitCode;
        } catch (const Error &error) {
            // One line, whatever a file's name or content put into the message.
            err << "peaklens-cli: " << visibleText(error.what()) << '\n';
        } catch (const std::bad_alloc &) {
            err << "peaklens-cli: " << command.subcommand->get_name() << " ran out of memory.\n";
        } catch (const std::exception &error) {
            err << "peaklens-cli: " << command.subcommand->get_name() << " failed: " << visibleText(error.what()) << '\n';
        }
        return 2;
    }
    return 2;
}

} // namespace peaklens::cli
