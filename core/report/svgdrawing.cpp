// SPDX-License-Identifier: Apache-2.0
#include "svgdrawing.h"

#include "htmlreport.h"

#include "core/trace/visibletext.h"

#include <algorithm>
#include <cstdio>

namespace peaklens::svg {

namespace {

constexpr double kRowHeight = 18;
constexpr double kMarkWidth = 22;
constexpr double kGap = 18; // between entries

std::size_t codePoints(std::string_view text)
{
    std::size_t count = 0;
    for (const char c : text)
        count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return count;
}

// The start of the last `count` code points.
std::size_t tailStart(std::string_view text, std::size_t count)
{
    std::size_t at = text.size();
    while (at > 0 && count > 0) {
        --at;
        if ((static_cast<unsigned char>(text[at]) & 0xC0) != 0x80)
            --count;
    }
    return at;
}

std::string mark(const LegendEntry &entry, double x, double y)
{
    const std::string color = palette::hex(entry.color);
    const std::string middle = number(y - 4);
    switch (entry.mark) {
    case LegendEntry::Mark::Swatch:
        return "<rect x=\"" + number(x) + "\" y=\"" + number(y - 10) + "\" width=\"16\" height=\"12\" fill=\"" + color + "\"/>";
    case LegendEntry::Mark::FaintSwatch:
        // Phase colours are faint by design; the outline keeps them visible on white paper.
        return "<rect x=\"" + number(x) + "\" y=\"" + number(y - 10) + "\" width=\"16\" height=\"12\" fill=\"" + color
               + "\" stroke=\"" + palette::hex(palette::kAxis) + "\"/>";
    case LegendEntry::Mark::Line:
    case LegendEntry::Mark::DashedLine:
        return "<line x1=\"" + number(x) + "\" x2=\"" + number(x + 18) + "\" y1=\"" + middle + "\" y2=\"" + middle
               + "\" stroke=\"" + color + "\" stroke-width=\"2\""
               + (entry.mark == LegendEntry::Mark::DashedLine ? " stroke-dasharray=\"5 3\"" : "") + "/>";
    }
    return {};
}

} // namespace

std::string number(double value)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

double textWidth(std::string_view text)
{
    // 0.6 em a character: wider than most sans-serif text on average, so estimates err on
    // the side of room.
    return static_cast<double>(codePoints(visibleText(text))) * kFontSize * 0.6;
}

std::string fitKeepingEnd(std::string_view text, double width)
{
    std::string shown = visibleText(text);
    if (textWidth(shown) <= width)
        return shown;
    const auto room = static_cast<std::size_t>(std::max(0.0, width / (kFontSize * 0.6) - 1));
    return "\xe2\x80\xa6" + shown.substr(tailStart(shown, room)); // …
}

std::string text(double x, double y, std::string_view content, std::string_view anchor, std::string_view extraAttributes)
{
    std::string out = "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\"";
    if (anchor != "start")
        out += " text-anchor=\"" + std::string(anchor) + "\"";
    if (!extraAttributes.empty())
        out += " " + std::string(extraAttributes);
    return out + ">" + escapeHtml(content) + "</text>";
}

Legend legend(const std::vector<LegendEntry> &entries, double left, double top, double width)
{
    Legend out;
    if (entries.empty())
        return out;
    double x = left;
    double baseline = top + 13;
    for (const LegendEntry &entry : entries) {
        const double entryWidth = kMarkWidth + textWidth(entry.label);
        if (x > left && x + entryWidth > left + width) {
            x = left;
            baseline += kRowHeight;
        }
        out.elements += mark(entry, x, baseline) + text(x + kMarkWidth, baseline, entry.label);
        x += entryWidth + kGap;
    }
    out.height = baseline - top + 5;
    return out;
}

} // namespace peaklens::svg
