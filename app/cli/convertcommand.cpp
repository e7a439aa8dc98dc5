// peaklens-cli convert IN OUT.peaklens: save any trace PeakLens reads as a native file.

#include "command.h"

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"

#include <filesystem>
#include <memory>

namespace peaklens::cli {

Command addConvertCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("convert", "Save a trace as a native PeakLens file (*.peaklens)");
    struct Options
    {
        std::string input;
        std::string output;
        bool force = false;
    };
    auto options = std::make_shared<Options>();
    command->add_option("IN", options->input, "Trace file to read")->required();
    command->add_option("OUT", options->output, "The *.peaklens file to write")->required();
    command->add_flag("--force", options->force, "Replace OUT if it exists (atomically, never in place)");
    return {command, [options] {
                std::error_code ec;
                if (std::filesystem::equivalent(options->input, options->output, ec))
                    throw FileError(options->output, "is the input file; write the converted trace to a new file.");
                if (!options->force && std::filesystem::exists(options->output, ec))
                    throw FileError(options->output, "already exists; pass --force to replace it.");
                const auto trace = loadTrace(options->input);
                TraceWriter::writeTrace(*trace, options->output);
                return "wrote " + options->output + " (" + std::to_string(trace->events.size()) + " memory events)\n";
            }};
}

} // namespace peaklens::cli
