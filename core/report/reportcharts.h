// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report's charts as SVG, each with its axes and its legend inside it, so that a
// chart reads the same in a browser and in the PDF (which draws SVG through Qt's renderer).

#include "reportdata.h"

#include <optional>
#include <string>

namespace peaklens {

struct SvgChart
{
    int width = 0;
    int height = 0;
    std::string label;    // what it shows, for screen readers
    std::string elements; // the SVG elements, without the <svg> around them
};

// Allocated memory over the trace, stacked by category, with the reserved memory and the
// peak. Nullopt when the trace allocates nothing.
std::optional<SvgChart> timelineChart(const ReportRun &run);

// The activations each leaf layer keeps for the backward pass, the largest first. Nullopt
// when no layer keeps any.
std::optional<SvgChart> layerBarsChart(const ReportRun &run);

// The baseline's measured step, with each later run's predicted (dashed) and measured
// step on the same clock. Nullopt when the baseline has no cost model.
std::optional<SvgChart> comparisonChart(const ReportData &data);

} // namespace peaklens
