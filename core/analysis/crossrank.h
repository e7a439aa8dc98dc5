// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ranks of a distributed run side by side: per rank its peak, reserved peak, median
// step time and the layer holding the most at the peak, with the ranks far from the others
// flagged. A rank's row comes from its own trace alone (overviewRank), so a caller can
// drop each trace once its overview is made: 64 ranks never sit in memory at once.
//
// Outliers: for the peak, and for the median step time over the ranks that have steps,
// m is the median over the ranks and MAD the median of |x - m|. A rank is an outlier when
// |x - m| > max(3 × MAD, 5 % of m): the MAD ignores a minority of odd ranks, and the 5 %
// keeps the noise of ranks that are all but equal from counting. Two ranks never differ
// from their median by more than their MAD, so it takes three to call one an outlier.

#include "core/analysis/levelofdetail.h"
#include "core/analysis/tracediff.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace peaklens {

struct RankOverview
{
    std::string file;
    std::optional<std::int64_t> rank;      // the trace's "rank" metadata, when it is a number
    std::optional<std::int64_t> worldSize; // its "world_size"
    PeakFigures figures;
    std::string topLayer; // module path of the layer holding the most at the peak; empty: none
    std::int64_t topLayerBytes = 0;
    std::size_t events = 0;
    std::int64_t firstNs = 0, lastNs = 0; // time of the first and last memory event
    // Allocated bytes on the peak's device over [firstNs, lastNs], lowest and highest per
    // column: a small timeline that never loses the peak.
    std::vector<ColumnRange> envelope;
};

// `columns` is the envelope's width (0: none). The first form finds the peak itself and
// nothing else; the second reads a summary already made (an AnalysedTrace's), and the
// allocated series on the peak's device when the caller has it (a timeline's): the
// envelope is reduced from it, without a series of its own built over every event.
RankOverview overviewRank(std::string file, const Trace &trace, std::size_t columns);
RankOverview overviewRank(std::string file, const Trace &trace, const TraceSummary &summary, std::size_t columns,
                          std::optional<std::span<const SeriesPoint>> allocated = std::nullopt);

struct RankRow
{
    RankOverview overview;
    std::int64_t rank = 0; // the metadata's rank, else the overview's position in the list given
    bool outlier = false;
    std::string reason; // why it is one: "peak 20.00 GiB is 100.0 % above the ranks' median of 10.00 GiB"
};

struct CrossRankTable
{
    std::vector<RankRow> rows; // by rank, then by position in the list given
    std::int64_t medianPeakBytes = 0;
    std::optional<std::int64_t> medianStepTimeNs; // over the ranks with steps
};

CrossRankTable crossRankTable(std::vector<RankOverview> ranks);

} // namespace peaklens
