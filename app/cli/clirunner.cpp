// SPDX-License-Identifier: Apache-2.0
#include "clirunner.h"

#include "command.h"
#include "completionspec.h"

#include "core/error.h"
#include "core/trace/visibletext.h"

#include <new>
#include <ostream>

namespace peaklens::cli {

namespace {

int parseAndRun(int argc, char **argv, std::ostream &out, std::ostream &err)
{
    CLI::App app("PeakLens: memory profiler for deep-learning training", "peaklens-cli");
    app.set_version_flag("--version", std::string("peaklens-cli ") + PEAKLENS_VERSION);
    app.require_subcommand(1);
    const Command commands[] = {
        addInfoCommand(app),  addSummaryCommand(app), addDiffCommand(app),   addConvertCommand(app),
        addPlanCommand(app),  addParetoCommand(app),  addReportCommand(app), addRecordCommand(app),
        addRerunCommand(app), addWatchCommand(app),   addQueryCommand(app),  addSendCommand(app),
    };
    // Hidden from --help (group ""): the completion scripts the build installs, written from
    // this very definition so that they cannot drift from it. Success ends the parse with
    // exit code 0, as --version does, whatever else is missing.
    const auto printCompletion = [&app, &out](const std::string &shell) {
        const CompletionSpec spec = completionSpecOf(app);
        out << (shell == "bash" ? bashCompletionScript(spec) : zshCompletionScript(spec)) << std::flush;
        throw CLI::Success();
    };
    app.add_option_function<std::string>("--completion", printCompletion, "Print the completion script for bash or zsh")
        ->check(CLI::IsMember({"bash", "zsh"}))
        ->group("");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &error) {
        if (error.get_exit_code() == 0) // --help, --version, --completion
            return app.exit(error, out, err) == 0 ? 0 : 2;
        // One line, as every other error: what is wrong, and where the options are listed.
        std::string help = "peaklens-cli";
        for (const CLI::App *subcommand : app.get_subcommands())
            help += " " + subcommand->get_name();
        err << "peaklens-cli: " << visibleText(error.what()) << "; see " << help << " --help.\n";
        return 2;
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

} // namespace

int runCli(int argc, char **argv, std::ostream &out, std::ostream &err)
{
    // Whatever escapes the commands' own handling (setting up the parser, a library's
    // exception outside a command) still ends in one line and exit code 2, never abort().
    try {
        return parseAndRun(argc, argv, out, err);
    } catch (const std::bad_alloc &) {
        err << "peaklens-cli: ran out of memory.\n";
    } catch (const std::exception &error) {
        err << "peaklens-cli: " << visibleText(error.what()) << '\n';
    } catch (...) {
        err << "peaklens-cli: stopped by an error it could not describe.\n";
    }
    return 2;
}

} // namespace peaklens::cli
