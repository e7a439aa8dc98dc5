#include "tracedocument.h"

#include "localpath.h"

#include "core/import/traceloader.h"

#include <future>

namespace peaklens::gui {

QString TraceDocument::filePath() const
{
    return fromLocalPath(path);
}

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
    document->path = localPath(path);
    document->trace = std::move(tracePtr);
    document->chain = chain;
    const Trace &trace = *document->trace;

    // One band per repeated block (and per layer outside them), not per innermost module.
    auto byLayer = std::async(std::launch::async, [&trace, &chain] {
        const std::vector<std::uint32_t> layers = chain.layers.empty() ? defaultChain(trace) : chain.layers;
        return blockDepth(trace, layers);
    });
    ImportProgress analysing = progress;
    analysing.report = [&progress](double fraction) { progress.tick(0.9 + fraction * 0.05); };
    analyseInto(*document, analysing);
    // The totals are byCategory's, shared: only the bands are new.
    document->byLayer = regroupTimeline(trace, document->byCategory, GroupBy::Layer, byLayer.get());
    // The device is known once the peak is: the blocks index beside the rest.
    auto blocks = std::async(std::launch::async, [&trace, device = document->device] {
        return std::make_shared<const BlockIndex>(trace, device);
    });
    document->kernels = std::make_shared<const KernelLanes>(trace, document->device);
    document->sites = std::make_shared<const AllocationSites>(trace.stacks);
    document->allocatedBlocks = SeriesBlocks::build(document->byCategory.allocated);
    document->reservedBlocks = SeriesBlocks::build(document->byCategory.reserved);
    document->blocks = blocks.get();
    progress.tick(1.0);
    return document;
}

} // namespace peaklens::gui
