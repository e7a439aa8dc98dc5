// SPDX-License-Identifier: Apache-2.0
// peaklens-cli info FILE: what a trace file holds, without analysing it.

#include "command.h"
#include "textoutput.h"

#include "core/import/traceloader.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <memory>

namespace peaklens::cli {

namespace {

std::string describe(const std::string &path, const Trace &trace)
{
    std::string out = visibleText(path) + "\n";
    TextTable table({"", ""});
    table.addRow({"source", trace.metaValue(metakey::SourceFormat)});
    if (auto description = trace.metaValue(metakey::Description); !description.empty())
        table.addRow({"description", description});
    std::string devices;
    for (const Device &device : trace.devices())
        devices += (devices.empty() ? "" : ", ") + device.toString();
    if (auto name = trace.metaValue(metakey::DeviceName); !name.empty())
        devices += " (" + name + ")";
    table.addRow({"devices", devices.empty() ? std::string("none") : devices});
    table.addRow({"memory events", formatCount(static_cast<std::int64_t>(trace.events.size()))});
    table.addRow({"segment events", formatCount(static_cast<std::int64_t>(trace.reserved.size()))});
    if (!trace.events.empty()) {
        const std::int64_t first = trace.events.timeNs(0);
        const std::int64_t last = trace.events.timeNs(trace.events.size() - 1);
        table.addRow(
            {"time span", formatDuration(last - first) + ", from " + std::to_string(first) + " ns on the trace's clock"});
    }
    table.addRow({"layers", formatCount(static_cast<std::int64_t>(trace.layers.size()))});
    table.addRow({"ranges", formatCount(static_cast<std::int64_t>(trace.ranges.size()))});
    table.addRow({"steps", formatCount(static_cast<std::int64_t>(trace.steps.size()))});
    table.addRow({"kernels", formatCount(static_cast<std::int64_t>(trace.kernels.size()))});
    std::int64_t ooms = 0;
    for (const Marker &marker : trace.markers)
        ooms += marker.kind == MarkerKind::OutOfMemory;
    if (ooms > 0)
        table.addRow({"out of memory", formatCount(ooms) + (ooms == 1 ? " failure" : " failures")});
    table.addRow({"call stacks", formatCount(static_cast<std::int64_t>(trace.stacks.stackCount() - 1)) + " ("
                                     + formatCount(static_cast<std::int64_t>(trace.stacks.frames().size())) + " frames)"});
    out += table.toString();
    out += "metadata\n";
    TextTable meta({"", ""});
    for (const auto &[key, value] : trace.meta)
        meta.addRow({key, value});
    out += meta.toString();
    return out;
}

} // namespace

Command addInfoCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("info", "Show what a trace file holds: source, devices, counts, metadata");
    auto path = std::make_shared<std::string>();
    command
        ->add_option("FILE", *path,
                     "Trace file: *.peaklens, a PyTorch memory snapshot, a Kineto trace, a memory timeline or trace text")
        ->required();
    return {command, [path] { return describe(*path, *loadTrace(*path)); }};
}

} // namespace peaklens::cli
