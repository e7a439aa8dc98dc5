#include "tracedocument.h"

#include "localpath.h"

#include "core/error.h"
#include "core/import/traceloader.h"
#include "core/trace/visibletext.h"

#include <future>

namespace peaklens::gui {

DocumentPtr loadDocument(const QString &path, const ImportProgress &progress)
{
    // Reading is most of the work; the analysis takes the last tenth of the bar.
    ImportProgress reading = progress;
    reading.report = [&progress](double fraction) { progress.tick(fraction * 0.9); };
    return analyseDocument(path, loadTrace(localPath(path), reading), {}, progress);
}

DocumentPtr analyseDocument(const QString &path, TracePtr tracePtr, const ChainSelection &chain, const ImportProgress &progress)
{
    auto document = std::make_shared<TraceDocument>();
    document->path = path;
    document->trace = std::move(tracePtr);
    document->chain = chain;
    const Trace &trace = *document->trace;

    // The analyses read the trace only and are independent: run them side by side.
    const PeakReport peaks = findPeaks(trace);
    if (peaks.primary)
        document->device = peaks.devices[*peaks.primary].device;
    else if (!trace.lanes.empty())
        document->device = trace.lanes.front().device;
    const Device device = document->device;
    auto summary = std::async(std::launch::async, [&trace] { return summarize(trace); });
    // One band per repeated block (and per layer outside them), not per innermost module.
    auto byLayer = std::async(std::launch::async, [&trace, device, &chain] {
        return buildTimeline(trace, device, GroupBy::Layer, blockDepth(trace, chain.layers.empty() ? defaultChain(trace) : chain.layers));
    });
    auto costModel = std::async(std::launch::async, [&trace, &chain]() -> std::pair<std::optional<CostModel>, QString> {
        try {
            return {buildCostModel(trace, chain), QString()};
        } catch (const Error &error) {
            return {std::nullopt, QString::fromStdString(visibleText(error.what()))};
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
