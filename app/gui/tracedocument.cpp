#include "tracedocument.h"

#include "core/error.h"
#include "core/import/traceloader.h"

#include <future>

namespace peaklens::gui {

DocumentPtr loadDocument(const QString &path, const ImportProgress &progress)
{
    auto document = std::make_shared<TraceDocument>();
    document->path = path;
    // Reading is most of the work; the analysis takes the last tenth of the bar.
    ImportProgress reading = progress;
    reading.report = [&progress](double fraction) { progress.tick(fraction * 0.9); };
    document->trace = loadTrace(path.toStdString(), reading);
    const Trace &trace = *document->trace;

    // The analyses read the trace only and are independent: run them side by side.
    const PeakReport peaks = findPeaks(trace);
    if (peaks.primary)
        document->device = peaks.devices[*peaks.primary].device;
    else if (!trace.lanes.empty())
        document->device = trace.lanes.front().device;
    const Device device = document->device;
    auto summary = std::async(std::launch::async, [&trace] { return summarize(trace); });
    auto byLayer = std::async(std::launch::async, [&trace, device] { return buildTimeline(trace, device, GroupBy::Layer); });
    auto costModel = std::async(std::launch::async, [&trace]() -> std::pair<std::optional<CostModel>, QString> {
        try {
            return {buildCostModel(trace), QString()};
        } catch (const Error &error) {
            return {std::nullopt, QString::fromStdString(error.what())};
        }
    });
    document->sites = std::make_shared<const AllocationSites>(trace.stacks);
    document->byCategory = buildTimeline(trace, device, GroupBy::Category);
    document->allocatedBlocks = SeriesBlocks::build(document->byCategory.allocated);
    document->reservedBlocks = SeriesBlocks::build(document->byCategory.reserved);
    progress.tick(0.95);
    document->byLayer = byLayer.get();
    document->summary = summary.get();
    std::tie(document->costModel, document->costModelProblem) = costModel.get();
    progress.tick(1.0);
    return document;
}

} // namespace peaklens::gui
