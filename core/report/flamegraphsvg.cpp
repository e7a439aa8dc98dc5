// SPDX-License-Identifier: Apache-2.0
#include "flamegraphsvg.h"

#include "htmlreport.h"
#include "palette.h"
#include "svgdrawing.h"

#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace peaklens {

namespace {

using svg::number;

// As wide as the report's other charts.
constexpr double kWidth = 760;
constexpr double kRowHeight = 18;
constexpr double kBoxHeight = 17;
constexpr double kTextInset = 4;
// Real stacks run dozens of frames deep; the rows below this are left out, and a line
// under the chart says so.
constexpr std::uint32_t kMaxRows = 40;
// Narrower boxes are left out, with what lies under them: their parent's box holds their bytes.
constexpr double kMinBoxWidth = 0.5;

constexpr palette::Rgb kRootColor = 0xd5d9e0;
constexpr palette::Rgb kPlaceholderColor = 0xe4e7ec;

// Each kind of code keeps a colour, the user's own code the warmest.
palette::Rgb kindColor(FrameKind kind)
{
    static constexpr std::array<std::size_t, kFrameKindCount> series = {
        1, // user: orange
        5, // library: yellow
        3, // torch: red
        6, // autograd: purple
        4, // dispatcher: teal
        8, // allocator: brown
        0, // interpreter: blue
        9, // system: green
    };
    return palette::seriesColor(series[static_cast<std::size_t>(kind)]);
}

// Halfway to white: the labels stay readable on every colour.
palette::Rgb tint(palette::Rgb color, double towardsWhite)
{
    palette::Rgb out = 0;
    for (int shift = 0; shift <= 16; shift += 8) {
        const double channel = static_cast<double>((color >> shift) & 0xff);
        out |= static_cast<palette::Rgb>(std::lround(channel + (255.0 - channel) * towardsWhite)) << shift;
    }
    return out;
}

palette::Rgb boxColor(const FlameNode &node)
{
    switch (node.type) {
    case FlameNodeType::Root:
        return kRootColor;
    case FlameNodeType::Frame:
        return tint(kindColor(node.frameKind), 0.45);
    case FlameNodeType::Layer:
        return tint(palette::seriesColor(0), node.depth % 2 ? 0.45 : 0.6);
    case FlameNodeType::Synthetic:
    case FlameNodeType::NoStack:
    case FlameNodeType::OnlyHidden:
    case FlameNodeType::NoLayer:
        break;
    }
    return kPlaceholderColor;
}

// `text` cut to `width`, keeping its start (a frame's function comes first); empty when
// not even a few characters fit.
std::string fitKeepingStart(std::string_view text, double width)
{
    std::string shown = visibleText(text);
    if (svg::textWidth(shown) <= width)
        return shown;
    const auto room = static_cast<std::size_t>(std::max(0.0, width / (svg::kFontSize * 0.6) - 1));
    if (room < 3)
        return {};
    std::size_t end = 0;
    for (std::size_t kept = 0; end < shown.size() && kept < room; ++kept) {
        ++end;
        while (end < shown.size() && (static_cast<unsigned char>(shown[end]) & 0xC0) == 0x80)
            ++end;
    }
    return shown.substr(0, end) + "\xe2\x80\xa6"; // …
}

std::string percentOf(std::int64_t part, std::int64_t whole)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return text;
}

std::string tooltip(const FlameGraph &graph, const FlameNode &node)
{
    if (node.type == FlameNodeType::Root)
        return flameRootLabel(graph) + " in " + formatCount(node.blocks) + (node.blocks == 1 ? " block" : " blocks");
    std::string text = (node.detail.empty() ? node.label : node.detail) + " \xc2\xb7 " + formatBytes(node.bytes) + " ("
                       + percentOf(node.bytes, graph.nodes.front().bytes) + " of live memory) in " + formatCount(node.blocks)
                       + (node.blocks == 1 ? " block" : " blocks");
    if (node.selfBytes > 0 && node.selfBytes < node.bytes)
        text += ", " + formatBytes(node.selfBytes) + " allocated here";
    if (node.type == FlameNodeType::Frame)
        text += " \xc2\xb7 " + std::string(frameKindName(node.frameKind)) + " code";
    return text;
}

// The frame kinds drawn, in the classifier's order, for the legend.
std::vector<svg::LegendEntry> kindLegend(const std::array<bool, kFrameKindCount> &drawn)
{
    std::vector<svg::LegendEntry> entries;
    for (int k = 0; k < kFrameKindCount; ++k) {
        if (drawn[static_cast<std::size_t>(k)])
            entries.push_back({std::string(frameKindName(FrameKind(k))), tint(kindColor(FrameKind(k)), 0.45)});
    }
    return entries;
}

} // namespace

std::string flameRootLabel(const FlameGraph &graph)
{
    return graph.nodes.front().label + " \xe2\x80\x94 " + formatBytes(graph.nodes.front().bytes); // —
}

std::optional<SvgChart> flameGraphChart(const FlameGraph &graph, std::string_view label)
{
    if (graph.nodes.empty() || graph.nodes.front().bytes <= 0)
        return std::nullopt;
    const std::vector<std::uint32_t> top = graph.children(0);
    if (top.size() == 1 && graph.nodes[top.front()].type != FlameNodeType::Frame
        && graph.nodes[top.front()].type != FlameNodeType::Layer)
        return std::nullopt;

    const double scale = kWidth / static_cast<double>(graph.nodes.front().bytes);
    std::vector<double> left(graph.nodes.size(), 0.0), nextChild(graph.nodes.size(), 0.0);
    std::vector<bool> drawn(graph.nodes.size(), false);
    std::array<bool, kFrameKindCount> kindsDrawn{};
    std::uint32_t rows = 0;
    bool cutDeep = false, cutNarrow = false;
    std::string elements;
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        const FlameNode &node = graph.nodes[i];
        if (i > 0) {
            left[i] = nextChild[node.parent];
            nextChild[node.parent] += static_cast<double>(node.bytes) * scale;
        }
        nextChild[i] = left[i];
        const double width = static_cast<double>(node.bytes) * scale;
        if (i > 0 && !drawn[node.parent])
            continue;
        if (node.depth >= kMaxRows) {
            cutDeep = true;
            continue;
        }
        if (width < kMinBoxWidth) {
            cutNarrow = true;
            continue;
        }
        drawn[i] = true;
        rows = std::max(rows, node.depth + 1);
        if (node.type == FlameNodeType::Frame)
            kindsDrawn[static_cast<std::size_t>(node.frameKind)] = true;
        const double y = static_cast<double>(node.depth) * kRowHeight;
        const std::string shown = fitKeepingStart(i == 0 ? flameRootLabel(graph) : node.label, width - 2 * kTextInset);
        elements += "<g><title>" + escapeHtml(tooltip(graph, node)) + "</title><rect x=\"" + number(left[i]) + "\" y=\""
                    + number(y) + "\" width=\"" + number(std::max(width - 0.5, 0.5)) + "\" height=\"" + number(kBoxHeight)
                    + "\" fill=\"" + palette::hex(boxColor(node)) + "\"/>";
        if (!shown.empty())
            elements += svg::text(left[i] + kTextInset, y + 13, shown);
        elements += "</g>";
    }
    double bottom = static_cast<double>(rows) * kRowHeight + 6;
    if (cutDeep || cutNarrow) {
        std::string note = "Not drawn: ";
        note += cutNarrow ? "boxes narrower than half a pixel" : "";
        note += cutDeep ? std::string(cutNarrow ? "; " : "") + "frames more than " + std::to_string(kMaxRows) + " deep" : "";
        note += " (their bytes are in the boxes above them).";
        elements += svg::text(0, bottom + 12, note, "start", "fill=\"" + palette::hex(palette::kReserved) + "\"");
        bottom += 18;
    }
    const svg::Legend legend = svg::legend(kindLegend(kindsDrawn), 0, bottom, kWidth);
    elements += legend.elements;
    bottom += legend.height;
    return SvgChart{static_cast<int>(kWidth), static_cast<int>(bottom + 4), std::string(label), std::move(elements)};
}

} // namespace peaklens
