// SPDX-License-Identifier: GPL-3.0-or-later
#include "tracedocument.h"

#include "localpath.h"

#include "core/analysis/allocatorstate.h"
#include "core/document/filesummary.h"
#include "core/trace/metadata.h"
#include "core/trace/units.h"

#include <QObject>

#include <algorithm>
#include <future>
#include <optional>

namespace peaklens::gui {

QString TraceDocument::filePath() const
{
    return fromLocalPath(path);
}

std::int64_t TraceDocument::originNs() const
{
    std::optional<std::int64_t> origin;
    if (!byCategory.allocated.empty())
        origin = byCategory.allocated.front().timeNs;
    if (!trace->steps.empty())
        origin = std::min(origin.value_or(trace->steps.front().beginNs), trace->steps.front().beginNs);
    return origin.value_or(0);
}

QString statusText(const TraceDocument &document)
{
    const auto count = [](std::size_t n, const char *noun) {
        return QString::fromStdString(formatCount(static_cast<std::int64_t>(n)) + " " + noun + (n == 1 ? "" : "s"));
    };
    const Trace &trace = *document.trace;
    QString status = isStateOnly(trace) ? count(trace.events.size(), "block") + QObject::tr(" live at dump time")
                                        : QStringList{count(trace.events.size(), "memory event"),
                                                      count(trace.layers.size(), "layer"), count(trace.steps.size(), "step")}
                                              .join(QStringLiteral(", "));
    if (trace.metaValue(metakey::AllocatorView) == "segments")
        status += QObject::tr(" — recorded with PyTorch's caching allocator, which hides tensors: only its segments "
                              "(reserved memory) were seen. Record with the exact or async allocator for per-layer memory.");
    return status;
}

QStringList stateOnlyNotes(const TraceDocument &document)
{
    QStringList notes{QString::fromUtf8(kStateOnlyHeadline.data(), qsizetype(kStateOnlyHeadline.size()))};
    for (const DevicePeak &peak : document.summary.peak.devices)
        notes << QString::fromStdString(judgeDumpState(*document.trace, peak.device).explanation);
    if (document.trace->events.empty() && document.trace->reserved.empty())
        notes << QObject::tr("It holds no memory: the process had allocated nothing when the snapshot was taken.");
    return notes;
}

namespace {

// What only the window draws: the blocks index, kernel lanes, allocation sites and the
// level-of-detail blocks of the curves.
void addDrawing(TraceDocument &document)
{
    const Trace &trace = *document.trace;
    // The device is known once the peak is: the blocks index beside the rest.
    auto blocks = std::async(std::launch::async,
                             [&trace, device = document.device] { return std::make_shared<const BlockIndex>(trace, device); });
    document.kernels = std::make_shared<const KernelLanes>(trace, document.device);
    document.sites = std::make_shared<const AllocationSites>(trace.stacks);
    document.allocatedBlocks = SeriesBlocks::build(document.byCategory.allocated);
    document.reservedBlocks = SeriesBlocks::build(document.byCategory.reserved);
    for (const GroupBy groupBy : {GroupBy::Pool, GroupBy::Stream}) {
        if (groupsLanes(trace, document.device, groupBy))
            (groupBy == GroupBy::Pool ? document.byPool : document.byStream) =
                regroupTimeline(trace, document.byCategory, groupBy);
    }
    document.blocks = blocks.get();
}

} // namespace

bool TraceDocument::hasGrouping(GroupBy groupBy) const
{
    switch (groupBy) {
    case GroupBy::Category:
        return true;
    case GroupBy::Layer:
        return !trace->layers.empty();
    case GroupBy::Pool:
        return !byPool.groups.empty();
    case GroupBy::Stream:
        return !byStream.groups.empty();
    }
    return false;
}

const TimelineSeries &TraceDocument::timeline(GroupBy groupBy) const
{
    switch (groupBy) {
    case GroupBy::Layer:
        return byLayer;
    case GroupBy::Pool:
        return hasGrouping(groupBy) ? byPool : byCategory;
    case GroupBy::Stream:
        return hasGrouping(groupBy) ? byStream : byCategory;
    case GroupBy::Category:
        break;
    }
    return byCategory;
}

DocumentPtr completeDocument(const QString &path, AnalysedTrace analysed, TimelineSeries byLayer)
{
    auto document = std::make_shared<TraceDocument>();
    static_cast<AnalysedTrace &>(*document) = std::move(analysed);
    document->path = localPath(path);
    document->byLayer = std::move(byLayer);
    addDrawing(*document);
    return document;
}

DocumentPtr loadDocument(const QString &path, const Progress &progress)
{
    // Reading is most of the work; the analysis takes the last tenth of the bar.
    return analyseDocument(path, openTrace(localPath(path), progress.part(0, 0.9)), {}, progress);
}

DocumentPtr analyseDocument(const QString &path, TracePtr tracePtr, const ChainSelection &chain, const Progress &progress)
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
    analyseInto(*document, progress.part(0.9, 0.95));
    // The totals are byCategory's, shared: only the bands are new.
    document->byLayer = regroupTimeline(trace, document->byCategory, GroupBy::Layer, byLayer.get());
    addDrawing(*document);
    progress.tick(1.0);
    return document;
}

} // namespace peaklens::gui
