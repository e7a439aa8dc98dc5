// SPDX-License-Identifier: Apache-2.0
// Fuzzes the analyses behind the app's memory views on any trace the text parser accepts:
// the block index and the block under a point of the stack, the flame graph with its search
// and selection, the allocator's state, series and OOM verdicts, kernel lanes, a trace
// diffed with itself, and the cross-rank table. None may crash, hang or disagree with
// itself where the figures must agree.
#include "core/analysis/allocatorstate.h"
#include "core/analysis/blockindex.h"
#include "core/analysis/crossrank.h"
#include "core/analysis/flamegraph.h"
#include "core/analysis/kernellanes.h"
#include "core/analysis/tracediff.h"
#include "core/analysis/tracesummary.h"
#include "core/error.h"
#include "core/trace/tracetext.h"

#include <cstdlib>

namespace {

void check(bool holds)
{
    if (!holds)
        std::abort();
}

void exercise(const peaklens::Trace &trace)
{
    using namespace peaklens;
    const TraceSummary summary = summarize(trace);
    for (const Device &device : trace.devices()) {
        const BlockIndex blocks(trace, device);
        const TimelineSeries series = buildTimeline(trace, device, GroupBy::Category);
        for (const SeriesPoint &point : std::vector<SeriesPoint>(series.allocated.begin(), series.allocated.end())) {
            (void)blockAtHeight(trace, blocks, series, {0, 1}, point.timeNs, point.bytes / 2);
            const FlameGraph graph = buildFlameGraph(trace, blocks.liveAllocationsAt(point.timeNs));
            std::int64_t rootChildren = 0;
            for (std::uint32_t child : graph.children(0))
                rootChildren += graph.nodes[child].bytes;
            check(graph.nodes.front().bytes == graph.nodes.front().selfBytes + rootChildren);
            (void)searchFlameGraph(graph, "a");
            if (graph.nodes.size() > 1)
                (void)selectUnder(trace, graph, 1);
            break; // one moment per device is enough for the graph
        }
        const AllocatorSeries allocator = allocatorSeries(trace, device);
        if (!allocator.points.empty())
            (void)allocatorStateAt(trace, device, allocator.points.back().timeNs);
        const KernelLanes kernels(trace, device);
        for (std::size_t lane = 0; lane < kernels.size(); ++lane) {
            (void)kernels.busy(lane, summary.firstNs, summary.lastNs + 1, 7);
            (void)kernels.kernelAt(lane, summary.firstNs);
        }
    }
    (void)analyseOutOfMemory(trace);
    const TraceDiff self = diffTraces(trace, summary, trace, summary);
    check(self.byLayer.empty() && self.bySite.empty() && self.byCategory.empty());
    (void)crossRankTable({overviewRank("a", trace, 8), overviewRank("b", trace, summary, 8), overviewRank("c", trace, 0)});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    std::shared_ptr<const peaklens::Trace> trace;
    try {
        trace = peaklens::parseTraceText(std::string_view(reinterpret_cast<const char *>(data), size));
    } catch (const peaklens::Error &) {
        return 0;
    }
    exercise(*trace);
    return 0;
}
