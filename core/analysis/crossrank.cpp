// SPDX-License-Identifier: Apache-2.0
#include "crossrank.h"

#include "lanedevices.h"
#include "median.h"

#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace peaklens {

namespace {

std::optional<std::int64_t> metaNumber(const Trace &trace, std::string_view key)
{
    const std::string text = trace.metaValue(key);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// Allocated bytes on `device`, a point per event time, reduced to `columns` columns.
std::vector<ColumnRange> envelopeOf(const Trace &trace, Device device, std::int64_t firstNs, std::int64_t lastNs,
                                    std::size_t columns)
{
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    if (columns == 0 || !deviceIndex)
        return {};
    const MemoryEvents &events = trace.events;
    const auto onDevice = [&](std::size_t i) { return lanes.deviceOfLane[events.lane(i)] == *deviceIndex; };
    // Sized first: a series of millions of points grown by doubling would take twice the room.
    std::size_t count = 0;
    for (std::size_t i = 0; i < events.size(); ++i)
        count += onDevice(i) ? 1 : 0;
    std::vector<SeriesPoint> series;
    series.reserve(count);
    std::int64_t total = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (!onDevice(i))
            continue;
        total += events.deltaBytes(i);
        if (!series.empty() && series.back().timeNs == events.timeNs(i))
            series.back().bytes = total;
        else
            series.push_back({events.timeNs(i), total});
    }
    return reduceToColumns(series, firstNs, lastNs + 1, static_cast<int>(std::min<std::size_t>(columns, 1 << 20)));
}

struct Outliers
{
    std::int64_t median = 0;
    std::vector<bool> flagged; // per value
};

// The rule the header states: |x - m| > max(3 × MAD, 5 % of m).
Outliers outliersOf(const std::vector<std::int64_t> &values)
{
    Outliers out;
    out.flagged.assign(values.size(), false);
    if (values.empty())
        return out;
    out.median = median(values);
    std::vector<std::int64_t> deviations;
    deviations.reserve(values.size());
    for (std::int64_t value : values)
        deviations.push_back(std::abs(value - out.median));
    const double mad = static_cast<double>(median(deviations));
    const double allowed = std::max(3.0 * mad, 0.05 * static_cast<double>(std::abs(out.median)));
    for (std::size_t i = 0; i < values.size(); ++i)
        out.flagged[i] = static_cast<double>(deviations[i]) > allowed;
    return out;
}

std::string farFrom(const std::string &what, std::int64_t value, std::int64_t median, std::string (*format)(std::int64_t))
{
    if (median == 0)
        return what + " " + format(value) + " against the ranks' median of " + format(median);
    char change[32];
    std::snprintf(change, sizeof change, "%.1f %%",
                  100.0 * std::abs(static_cast<double>(value - median)) / static_cast<double>(median));
    return what + " " + format(value) + " is " + change + (value > median ? " above" : " below") + " the ranks' median of "
           + format(median);
}

void addReason(RankRow &row, const std::string &reason)
{
    row.outlier = true;
    row.reason += (row.reason.empty() ? "" : "; ") + reason;
}

} // namespace

RankOverview overviewRank(std::string file, const Trace &trace, std::size_t columns)
{
    TraceSummary peaksOnly;
    peaksOnly.peak = findPeaks(trace);
    if (peaksOnly.peak.primary)
        setPeakFields(trace, trace.events, *peaksOnly.peak.devices[*peaksOnly.peak.primary].eventIndex, peaksOnly);
    return overviewRank(std::move(file), trace, peaksOnly, columns);
}

RankOverview overviewRank(std::string file, const Trace &trace, const TraceSummary &summary, std::size_t columns,
                          std::optional<std::span<const SeriesPoint>> allocated)
{
    RankOverview overview;
    overview.file = std::move(file);
    overview.rank = metaNumber(trace, metakey::Rank);
    overview.worldSize = metaNumber(trace, metakey::WorldSize);
    overview.figures = peakFigures(trace, summary);
    overview.events = trace.events.size();
    if (!trace.events.empty()) {
        overview.firstNs = trace.events.timeNs(0);
        overview.lastNs = trace.events.timeNs(trace.events.size() - 1);
    }
    if (summary.peak.liveAtPeak) {
        // byLayer is largest first; blocks outside every layer do not name one.
        for (const LiveGroup &group : summary.peak.liveAtPeak->byLayer) {
            if (group.key != kNoLayer && group.key < trace.layers.size()) {
                overview.topLayer = trace.layers[group.key].path;
                overview.topLayerBytes = group.bytes;
                break;
            }
        }
    }
    if (allocated && columns > 0)
        overview.envelope = reduceToColumns(*allocated, overview.firstNs, overview.lastNs + 1,
                                            static_cast<int>(std::min<std::size_t>(columns, 1 << 20)));
    else if (overview.figures.device)
        overview.envelope = envelopeOf(trace, *overview.figures.device, overview.firstNs, overview.lastNs, columns);
    return overview;
}

CrossRankTable crossRankTable(std::vector<RankOverview> ranks)
{
    CrossRankTable table;
    std::vector<std::int64_t> peaks, stepTimes;
    std::vector<std::size_t> withSteps;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        RankRow row;
        row.rank = ranks[i].rank.value_or(static_cast<std::int64_t>(i));
        row.overview = std::move(ranks[i]);
        peaks.push_back(row.overview.figures.peakBytes);
        if (row.overview.figures.stepTimeNs) {
            stepTimes.push_back(*row.overview.figures.stepTimeNs);
            withSteps.push_back(i);
        }
        table.rows.push_back(std::move(row));
    }
    const Outliers peakOutliers = outliersOf(peaks);
    table.medianPeakBytes = peakOutliers.median;
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        if (peakOutliers.flagged[i])
            addReason(table.rows[i], farFrom("peak", peaks[i], peakOutliers.median, formatBytes));
    }
    if (!stepTimes.empty()) {
        const Outliers stepOutliers = outliersOf(stepTimes);
        table.medianStepTimeNs = stepOutliers.median;
        for (std::size_t k = 0; k < withSteps.size(); ++k) {
            if (stepOutliers.flagged[k])
                addReason(table.rows[withSteps[k]], farFrom("step time", stepTimes[k], stepOutliers.median, formatDuration));
        }
    }
    std::stable_sort(table.rows.begin(), table.rows.end(), [](const RankRow &a, const RankRow &b) { return a.rank < b.rank; });
    return table;
}

} // namespace peaklens
