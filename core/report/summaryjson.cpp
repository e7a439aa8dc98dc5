// SPDX-License-Identifier: Apache-2.0
#include "summaryjson.h"

#include "jsonwriter.h"

#include "core/analysis/allocationsites.h"
#include "core/analysis/layerranking.h"

namespace peaklens {

namespace {

// Keys keep the order written here, which reads better than sorted.

void layerName(JsonWriter &out, const Trace &trace, std::uint32_t layer)
{
    if (layer == kNoLayer)
        out.null();
    else
        out.value(trace.layers[layer].path);
}

std::size_t limit(std::size_t size, std::optional<std::size_t> top)
{
    return top ? std::min(size, *top) : size;
}

void frames(JsonWriter &out, const Trace &trace, const AllocationSites &sites, std::uint32_t stack)
{
    out.beginArray();
    for (std::uint32_t frame : trace.stacks.framesOf(stack)) {
        const Frame &f = trace.stacks.frames()[frame];
        out.beginObject()
            .member("function", f.function)
            .member("file", f.file)
            .member("line", f.line)
            .member("kind", frameKindName(sites.kindOfFrame(frame)))
            .endObject();
    }
    out.endArray();
}

void group(JsonWriter &out, const LiveGroup &g)
{
    out.member("bytes", g.bytes).member("blocks", g.blocks);
}

void liveSet(JsonWriter &out, const Trace &trace, const LiveSet &set, std::optional<std::size_t> top,
             const std::optional<BlockGrouping> &grouping)
{
    const AllocationSites sites(trace.stacks);
    out.beginObject().member("time_ns", set.timeNs).member("bytes", set.bytes).member("blocks", set.allocations.size());
    out.key("by_category").beginArray();
    for (std::size_t i = 0; i < limit(set.byCategory.size(), top); ++i) {
        const LiveGroup &g = set.byCategory[i];
        out.beginObject().member("category", categoryName(static_cast<Category>(g.key)));
        group(out, g);
        out.endObject();
    }
    out.endArray().key("by_layer").beginArray();
    for (std::size_t i = 0; i < limit(set.byLayer.size(), top); ++i) {
        const LiveGroup &g = set.byLayer[i];
        out.beginObject().key("layer");
        layerName(out, trace, g.key);
        group(out, g);
        out.endObject();
    }
    out.endArray().key("by_site").beginArray();
    for (std::size_t i = 0; i < limit(set.bySite.size(), top); ++i) {
        const LiveGroup &g = set.bySite[i];
        out.beginObject()
            .member("site", sites.label(g.key))
            .member("location", sites.location(g.key))
            .member("kind", siteKindName(sites.site(g.key).kind))
            .key("callers")
            .beginArray();
        for (const std::string &caller : sites.callers(g.largestStack, 8))
            out.value(caller);
        out.endArray();
        group(out, g);
        out.key("frames");
        frames(out, trace, sites, g.largestStack);
        out.endObject();
    }
    out.endArray().key("by_stack").beginArray();
    for (std::size_t i = 0; i < limit(set.byStack.size(), top); ++i) {
        const LiveGroup &g = set.byStack[i];
        out.beginObject().key("frames");
        frames(out, trace, sites, g.key);
        group(out, g);
        out.endObject();
    }
    out.endArray();
    if (grouping) {
        const std::vector<GroupRow> rows = groupBlocks(trace, sites, set, *grouping);
        out.key("by_group").beginObject().member("grouping", grouping->text()).key("groups").beginArray();
        for (std::size_t i = 0; i < limit(rows.size(), top); ++i)
            out.beginObject()
                .member("group", rows[i].key)
                .member("bytes", rows[i].bytes)
                .member("blocks", rows[i].blocks)
                .endObject();
        out.endArray().endObject();
    }
    out.endObject();
}

void peakOf(JsonWriter &out, const Trace &trace, const TraceSummary &summary, const DevicePeak &p)
{
    out.beginObject()
        .member("device", p.device.toString())
        .member("allocated_bytes", p.allocatedBytes)
        .member("time_ns", p.timeNs)
        .member("step", summary.peakStep)
        .member("phase", phaseName(summary.peakPhase))
        .key("layer");
    layerName(out, trace, summary.peakLayer);
    out.member("reserved_bytes", p.reservedBytes)
        .member("reserved_time_ns", p.reservedTimeNs)
        .member("reserved_at_peak_bytes", p.reservedAtPeakBytes)
        .endObject();
}

void layers(JsonWriter &out, const Trace &trace, const TraceSummary &summary, std::optional<std::size_t> top)
{
    out.beginArray();
    const auto ranked = rankLayersByActivation(trace, summary.layers);
    for (std::size_t i = 0; i < limit(ranked.size(), top); ++i) {
        const LayerStats &s = summary.layers[ranked[i]];
        const Layer &layer = trace.layers[s.layer];
        out.beginObject().member("name", layer.path).member("kind", layer.kind).key("parent");
        layerName(out, trace, layer.parent);
        out.member("parameter_bytes", layer.parameterBytes)
            .member("activation_bytes", s.activationBytes)
            .member("self_activation_bytes", s.selfActivationBytes)
            .member("forward_ns", s.forwardNs)
            .member("backward_ns", s.backwardNs)
            .member("forward_calls", s.forwardCalls)
            .member("backward_calls", s.backwardCalls)
            .endObject();
    }
    out.endArray();
}

} // namespace

std::string peakToJson(const Trace &trace, const TraceSummary &summary)
{
    JsonWriter out;
    if (summary.peak.primary)
        peakOf(out, trace, summary, summary.peak.devices[*summary.peak.primary]);
    else
        out.null();
    return out.take();
}

std::string liveSetToJson(const Trace &trace, const LiveSet &live, std::optional<std::size_t> top,
                          const std::optional<BlockGrouping> &grouping)
{
    JsonWriter out;
    liveSet(out, trace, live, top, grouping);
    return out.take();
}

std::string summaryToJson(const Trace &trace, const TraceSummary &summary, std::optional<std::size_t> top,
                          const std::optional<BlockGrouping> &grouping)
{
    JsonWriter out;
    out.beginObject().key("meta").beginObject();
    for (const auto &[key, value] : trace.meta)
        out.member(key, value);
    out.endObject()
        .member("events", summary.eventCount)
        .member("reserved_events", trace.reserved.size())
        .member("first_ns", summary.firstNs)
        .member("last_ns", summary.lastNs)
        .member("step_time_ns", summary.stepTimeNs)
        .key("peak");
    if (summary.peak.primary)
        peakOf(out, trace, summary, summary.peak.devices[*summary.peak.primary]);
    else
        out.null();
    out.key("devices").beginArray();
    for (const DevicePeak &peak : summary.peak.devices) {
        out.beginObject()
            .member("device", peak.device.toString())
            .member("peak_allocated_bytes", peak.allocatedBytes)
            .member("peak_time_ns", peak.timeNs)
            .member("peak_reserved_bytes", peak.reservedBytes)
            .endObject();
    }
    out.endArray().key("live_at_peak");
    if (summary.peak.primary)
        liveSet(out, trace, *summary.peak.liveAtPeak, top, grouping);
    else
        out.null();
    out.key("layers");
    layers(out, trace, summary, top);
    // The steps one line each: a trace may hold millions.
    out.key("steps").beginArray();
    for (const StepStats &s : summary.steps) {
        out.beginObject(true)
            .member("number", s.number)
            .member("begin_ns", s.beginNs)
            .member("end_ns", s.endNs)
            .member("duration_ns", s.durationNs())
            .member("start_bytes", s.startBytes)
            .member("peak_allocated_bytes", s.peakAllocatedBytes)
            .member("peak_time_ns", s.peakTimeNs)
            .member("peak_phase", phaseName(s.peakPhase))
            .member("allocated_bytes", s.allocatedBytes)
            .member("allocations", s.allocations)
            .endObject();
    }
    out.endArray().endObject();
    return out.take();
}

} // namespace peaklens
