// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pieces the report's SVG charts are drawn with: numbers, text that fits a width, and
// legends drawn inside the chart, so their swatches show wherever the SVG is rendered
// (browsers, and Qt's SVG renderer for the PDF, which ignores the page's CSS).

#include "palette.h"

#include <string>
#include <string_view>
#include <vector>

namespace peaklens::svg {

// Every chart's text, set on the chart's outer group: the PDF's renderer sees no CSS.
inline constexpr double kFontSize = 12;
inline constexpr palette::Rgb kText = 0x3a4252;

// A coordinate with one decimal: "12.5".
std::string number(double value);

// How wide `text` is drawn at kFontSize, estimated from its characters (no font metrics
// without a renderer): generous, so that what is laid out by it does not overlap.
double textWidth(std::string_view text);

// `text` shortened to at most `width`, keeping its end ("…blocks.11.attn.proj"): the
// end of a module path says which module it is.
std::string fitKeepingEnd(std::string_view text, double width);

// <text> at (x, y), its baseline at y; `anchor` "start", "middle" or "end". `text` is raw:
// escaped here.
std::string text(double x, double y, std::string_view text, std::string_view anchor = "start",
                 std::string_view extraAttributes = {});

struct LegendEntry
{
    enum class Mark { Swatch, FaintSwatch, Line, DashedLine };
    std::string label; // raw text, escaped when drawn
    palette::Rgb color = 0;
    Mark mark = Mark::Swatch;
};

struct Legend
{
    std::string elements;
    double height = 0;
};

// Entries left to right from (left, top), starting a new row where the next would pass
// left + width.
Legend legend(const std::vector<LegendEntry> &entries, double left, double top, double width);

} // namespace peaklens::svg
