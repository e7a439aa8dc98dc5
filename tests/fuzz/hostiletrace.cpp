// SPDX-License-Identifier: Apache-2.0
#include "hostiletrace.h"

#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <map>
#include <string_view>

namespace peaklens::fuzz {

namespace {

using namespace std::string_view_literals;

constexpr std::string_view kHostile[] = {
    // Bidirectional embeddings, overrides and isolates, marks, invisible characters.
    "\u202E"sv,
    "\u202A"sv,
    "\u202B"sv,
    "\u202C"sv,
    "\u202D"sv,
    "\u2066"sv,
    "\u2067"sv,
    "\u2068"sv,
    "\u2069"sv,
    "\u200B"sv,
    "\u200E"sv,
    "\u200F"sv,
    "\u2028"sv,
    "\u2029"sv,
    "\uFEFF"sv,
    "\u061C"sv,
    "\u00AD"sv,
    // Controls, C0 and C1.
    "\x00"sv,
    "\x01"sv,
    "\x1b[2J"sv,
    "\x7f"sv,
    "\r"sv,
    "\n"sv,
    "\t"sv,
    "\xc2\x85"sv,
    "\xc2\x9b"sv,
    // Bytes that are not UTF-8: stray, overlong, surrogate, past U+10FFFF, cut short.
    "\xff"sv,
    "\xfe"sv,
    "\x80"sv,
    "\xc0\xaf"sv,
    "\xe0\x80\xaf"sv,
    "\xed\xa0\x80"sv,
    "\xf4\x90\x80\x80"sv,
    "\xf0\x9f\x98"sv,
    "\xc3"sv,
    // Markup.
    "</script>"sv,
    "<script>alert(1)</script>"sv,
    "</style>"sv,
    "<!--"sv,
    "-->"sv,
    "]]>"sv,
    "<![CDATA["sv,
    "&"sv,
    "&amp;"sv,
    "&#0;"sv,
    "&#x202E;"sv,
    "\""sv,
    "'"sv,
    "<"sv,
    ">"sv,
    "`"sv,
    "<svg onload=alert(1)>"sv,
    // CSV and spreadsheet formulas.
    "=cmd|' /C calc'!A0"sv,
    "+1"sv,
    "-1"sv,
    "@SUM(A1)"sv,
    ","sv,
    ";"sv,
    "\"\""sv,
    "\t=1"sv,
    "\r=1"sv,
    // Escapes as text, separators, format strings, JSON.
    "\\x41"sv,
    "\\u{202E}"sv,
    "\\"sv,
    "."sv,
    ".."sv,
    "a.b"sv,
    "%s%n"sv,
    "{\"a\":"sv,
    "\u00e9"sv,
    "\U0001F600"sv,
};

std::string hostileOrKept(FuzzedDataProvider &input, const std::string &kept)
{
    return input.ConsumeBool() ? hostileText(input) : kept;
}

} // namespace

std::string hostileText(FuzzedDataProvider &input)
{
    std::string text;
    const int parts = input.ConsumeIntegralInRange(1, 4);
    for (int i = 0; i < parts; ++i) {
        switch (input.ConsumeIntegralInRange(0, 3)) {
        case 0:
            text += input.PickValueInArray(kHostile);
            break;
        case 1:
            text += input.ConsumeRandomLengthString(24);
            break;
        case 2: {
            const std::string_view piece = input.PickValueInArray(kHostile);
            const std::size_t length = input.ConsumeIntegralInRange<std::size_t>(0, 1000);
            while (text.size() < length && !piece.empty())
                text += piece;
            break;
        }
        default:
            text += "name";
            break;
        }
    }
    return text;
}

TracePtr withHostileNames(const Trace &skeleton, FuzzedDataProvider &input)
{
    TraceBuilder builder;
    for (const auto &[key, value] : skeleton.meta)
        builder.setMeta(key, hostileOrKept(input, value));
    for (std::string_view key : {metakey::Description, metakey::DeviceName, metakey::Command, metakey::ReplaySpec,
                                 metakey::ReplayOptions, metakey::CreatedBy, metakey::SourceFormat}) {
        if (input.ConsumeBool())
            builder.setMeta(key, hostileText(input));
    }
    if (input.ConsumeBool())
        builder.setMeta(hostileText(input), hostileText(input));

    for (const Lane &lane : skeleton.lanes)
        builder.lane(lane);

    // Each path component is renamed the same way wherever it appears, so the tree keeps
    // its shape (unless a new name holds a dot).
    std::map<std::string, std::string, std::less<>> components;
    std::vector<std::uint32_t> layers;
    for (const Layer &layer : skeleton.layers) {
        std::string path;
        std::string_view rest = layer.path;
        while (true) {
            const std::size_t dot = rest.find('.');
            const std::string component(rest.substr(0, dot));
            auto it = components.find(component);
            if (it == components.end())
                it = components.emplace(component, hostileOrKept(input, component)).first;
            path += it->second;
            if (dot == std::string_view::npos)
                break;
            path += '.';
            rest.remove_prefix(dot + 1);
        }
        layers.push_back(builder.layer(path));
        builder.setLayerInfo(layers.back(), hostileOrKept(input, layer.kind), layer.parameterBytes);
    }
    const auto layerOf = [&layers](std::uint32_t layer) { return layer < layers.size() ? layers[layer] : kNoLayer; };
    // The layers to checkpoint, as a recorded trace names them: some renamed, some not.
    std::string checkpoint;
    for (std::size_t i = 0; i < layers.size() && input.ConsumeBool(); ++i) {
        const std::uint32_t layer = layers[input.ConsumeIntegralInRange<std::size_t>(0, layers.size() - 1)];
        checkpoint += (checkpoint.empty() ? "" : ",") + builder.current().layers[layer].path;
    }
    if (!checkpoint.empty())
        builder.setMeta(metakey::Checkpoint, checkpoint);

    std::vector<std::uint32_t> frames;
    for (const Frame &frame : skeleton.stacks.frames())
        frames.push_back(builder.stacks().internFrame(
            Frame{hostileOrKept(input, frame.function), hostileOrKept(input, frame.file), frame.line}));
    std::vector<std::uint32_t> stacks{StackTable::kEmptyStack};
    for (std::size_t node = 1; node < skeleton.stacks.nodes().size(); ++node) {
        const StackNode &original = skeleton.stacks.nodes()[node];
        stacks.push_back(builder.stacks().internStack(stacks.at(original.parent), frames.at(original.frame)));
    }

    for (std::size_t i = 0; i < skeleton.events.size(); ++i) {
        MemoryEvent event = skeleton.events.at(i);
        event.layer = layerOf(event.layer);
        event.stack = stacks.at(event.stack);
        builder.addEvent(event);
    }
    for (const ReservedEvent &event : skeleton.reserved)
        builder.addReserved(event);
    for (Range range : skeleton.ranges) {
        range.layer = layerOf(range.layer);
        builder.addRange(range);
    }
    for (const Step &step : skeleton.steps)
        builder.addStep(step);
    for (const Marker &marker : skeleton.markers)
        builder.addMarker(marker);
    // Kernels, one per step, on the first lane.
    for (const Step &step : skeleton.steps) {
        if (!skeleton.lanes.empty() && input.ConsumeBool())
            builder.addKernel(Kernel{builder.kernelName(hostileText(input)), 0, step.beginNs, step.endNs});
    }
    return builder.finish();
}

} // namespace peaklens::fuzz
