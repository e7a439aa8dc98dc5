// SPDX-License-Identifier: Apache-2.0
// peaklens-cli convert IN OUT.peaklens: save any trace PeakLens reads as a native file, with
// the figures its summary shows.

#include "command.h"

#include "core/document/summaryfigures.h"
#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"

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
                // Checked before the slow load, and again, atomically, when the file is moved into place.
                OutputFile output(options->output, options->force ? OutputFile::Existing::Replace : OutputFile::Existing::Refuse,
                                  {options->input});
                const auto trace = loadTrace(options->input);
                TraceWriter::writeTrace(*trace, output, storeSummaryFigures);
                return "wrote " + options->output + " (" + std::to_string(trace->events.size()) + " memory events)\n";
            }};
}

} // namespace peaklens::cli
