// SPDX-License-Identifier: Apache-2.0
#include "palette.h"

#include <array>
#include <cstdio>

namespace peaklens::palette {

namespace {

// Indexed by Category. Activations, what checkpointing saves, stand out in red.
constexpr std::array<Rgb, kCategoryCount> kCategoryColors = {
    0x4e79a7, // parameter
    0xf28e2b, // optimizer state
    0x76b7b2, // input
    0xedc948, // temporary
    0xe15759, // activation
    0x59a14f, // gradient
    0xb07aa1, // autograd detail
    0x9c9c9c, // unknown
    0x5f5f6e, // before the trace: there, of unknown content, darker than unknown
};

constexpr std::array<std::string_view, kCategoryCount> kCategoryLabels = {
    "parameter", "optimizer state", "input",   "temporary",        "activation",
    "gradient",  "autograd detail", "unknown", "before the trace",
};

constexpr std::array<Rgb, 10> kSeriesColors = {0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2,
                                               0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0x8cd17d};

} // namespace

Rgb categoryColor(Category category)
{
    return kCategoryColors.at(static_cast<std::size_t>(category));
}

Rgb seriesColor(std::size_t index)
{
    return kSeriesColors[index % kSeriesColors.size()];
}

Rgb phaseColor(Phase phase)
{
    switch (phase) {
    case Phase::Forward:
        return 0xdbe7fb;
    case Phase::Backward:
        return 0xfbe3d6;
    case Phase::Optimizer:
        return 0xdff0da;
    case Phase::Other:
        break;
    }
    return 0xffffff;
}

std::string hex(Rgb color)
{
    char text[8];
    std::snprintf(text, sizeof text, "#%06x", static_cast<unsigned>(color & 0xffffff));
    return text;
}

std::string_view categoryLabel(Category category)
{
    return kCategoryLabels.at(static_cast<std::size_t>(category));
}

} // namespace peaklens::palette
