// SPDX-License-Identifier: Apache-2.0
#include "analysedtrace.h"

#include "core/error.h"
#include "core/plan/checkpointstrategy.h"
#include "core/trace/metadata.h"

#include <future>

namespace peaklens {

// A list the strategy parser does not know (from a newer writer) is kept as written.
std::vector<std::string> recordedToggles(const Trace &trace)
{
    const std::string text = trace.metaValue(metakey::Checkpoint);
    try {
        return CheckpointStrategy::parse(text).unitTexts();
    } catch (const Error &) {
        std::vector<std::string> parts;
        for (std::size_t begin = 0; begin < text.size();) {
            const std::size_t comma = std::min(text.find(',', begin), text.size());
            if (comma > begin)
                parts.push_back(text.substr(begin, comma - begin));
            begin = comma + 1;
        }
        return parts;
    }
}

std::vector<double> AnalysedTrace::stepTimesMs() const
{
    std::vector<double> times;
    times.reserve(summary.steps.size());
    for (const StepStats &step : summary.steps)
        times.push_back(static_cast<double>(step.durationNs()) / 1e6);
    return times;
}

void analyseInto(AnalysedTrace &analysed, const Progress &progress)
{
    const Trace &trace = *analysed.trace;
    const ChainSelection &chain = analysed.chain;
    // Found once, for the summary, the model and the timeline's device alike: each finding
    // is a pass over every event and a live set.
    const PeakReport peaks = findPeaks(trace);
    // The model is the slowest; it runs beside the summary and the timeline.
    auto model = std::async(std::launch::async, [&trace, &chain, &peaks]() -> std::pair<std::optional<CostModel>, std::string> {
        try {
            return {buildCostModel(trace, chain, peaks), std::string()};
        } catch (const Error &error) {
            return {std::nullopt, error.what()};
        }
    });
    analysed.summary = summarize(trace, peaks);
    if (peaks.primary) {
        analysed.device = peaks.devices[*peaks.primary].device;
        analysed.peakBytes = peaks.devices[*peaks.primary].allocatedBytes;
    } else if (!trace.lanes.empty()) {
        analysed.device = trace.lanes.front().device;
    }
    progress.tick(0.3);
    analysed.byCategory = buildTimeline(trace, analysed.device, GroupBy::Category);
    analysed.checkpoint = recordedToggles(trace);
    std::tie(analysed.model, analysed.modelProblem) = model.get();
    progress.tick(1.0);
}

AnalysedTracePtr analyseTrace(std::string path, TracePtr trace, const ChainSelection &chain, const Progress &progress)
{
    auto analysed = std::make_shared<AnalysedTrace>();
    analysed->path = std::move(path);
    analysed->trace = std::move(trace);
    analysed->chain = chain;
    analyseInto(*analysed, progress);
    return analysed;
}

} // namespace peaklens
