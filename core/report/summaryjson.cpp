// SPDX-License-Identifier: Apache-2.0
#include "summaryjson.h"

#include "jsondump.h"

#include "core/analysis/allocationsites.h"
#include "core/analysis/layerranking.h"

#include <nlohmann/json.hpp>

namespace peaklens {

namespace {

// Keys keep the order written here, which reads better than sorted.
using json = nlohmann::ordered_json;

template<typename T>
json orNull(const std::optional<T> &value)
{
    return value ? json(*value) : json(nullptr);
}

json layerName(const Trace &trace, std::uint32_t layer)
{
    return layer == kNoLayer ? json(nullptr) : json(trace.layers[layer].path);
}

std::size_t limit(std::size_t size, std::optional<std::size_t> top)
{
    return top ? std::min(size, *top) : size;
}

json frames(const Trace &trace, const AllocationSites &sites, std::uint32_t stack)
{
    json list = json::array();
    for (std::uint32_t frame : trace.stacks.framesOf(stack)) {
        const Frame &f = trace.stacks.frames()[frame];
        list.push_back(
            {{"function", f.function}, {"file", f.file}, {"line", f.line}, {"kind", frameKindName(sites.kindOfFrame(frame))}});
    }
    return list;
}

json liveSet(const Trace &trace, const LiveSet &set, std::optional<std::size_t> top)
{
    json byCategory = json::array(), byLayer = json::array(), byStack = json::array(), bySite = json::array();
    const AllocationSites sites(trace.stacks);
    for (std::size_t i = 0; i < limit(set.byCategory.size(), top); ++i) {
        const LiveGroup &g = set.byCategory[i];
        byCategory.push_back(
            {{"category", categoryName(static_cast<Category>(g.key))}, {"bytes", g.bytes}, {"blocks", g.blocks}});
    }
    for (std::size_t i = 0; i < limit(set.byLayer.size(), top); ++i) {
        const LiveGroup &g = set.byLayer[i];
        byLayer.push_back({{"layer", layerName(trace, g.key)}, {"bytes", g.bytes}, {"blocks", g.blocks}});
    }
    for (std::size_t i = 0; i < limit(set.byStack.size(), top); ++i) {
        const LiveGroup &g = set.byStack[i];
        byStack.push_back({{"frames", frames(trace, sites, g.key)}, {"bytes", g.bytes}, {"blocks", g.blocks}});
    }
    for (std::size_t i = 0; i < limit(set.bySite.size(), top); ++i) {
        const LiveGroup &g = set.bySite[i];
        bySite.push_back({{"site", sites.label(g.key)},
                          {"location", sites.location(g.key)},
                          {"kind", siteKindName(sites.site(g.key).kind)},
                          {"callers", sites.callers(g.largestStack, 8)},
                          {"bytes", g.bytes},
                          {"blocks", g.blocks},
                          {"frames", frames(trace, sites, g.largestStack)}});
    }
    return {{"time_ns", set.timeNs},     {"bytes", set.bytes},  {"blocks", set.allocations.size()},
            {"by_category", byCategory}, {"by_layer", byLayer}, {"by_site", bySite},
            {"by_stack", byStack}};
}

} // namespace

std::string summaryToJson(const Trace &trace, const TraceSummary &summary, std::optional<std::size_t> top)
{
    json meta = json::object();
    for (const auto &[key, value] : trace.meta)
        meta[key] = value;

    json devices = json::array();
    for (const DevicePeak &peak : summary.peak.devices) {
        devices.push_back({{"device", peak.device.toString()},
                           {"peak_allocated_bytes", peak.allocatedBytes},
                           {"peak_time_ns", peak.timeNs},
                           {"peak_reserved_bytes", orNull(peak.reservedBytes)}});
    }

    json peak = nullptr;
    json live = nullptr;
    if (summary.peak.primary) {
        const DevicePeak &p = summary.peak.devices[*summary.peak.primary];
        peak = {{"device", p.device.toString()},
                {"allocated_bytes", p.allocatedBytes},
                {"time_ns", p.timeNs},
                {"step", orNull(summary.peakStep)},
                {"phase", phaseName(summary.peakPhase)},
                {"layer", layerName(trace, summary.peakLayer)},
                {"reserved_bytes", orNull(p.reservedBytes)},
                {"reserved_time_ns", orNull(p.reservedTimeNs)},
                {"reserved_at_peak_bytes", orNull(p.reservedAtPeakBytes)}};
        live = liveSet(trace, *summary.peak.liveAtPeak, top);
    }

    json layers = json::array();
    const auto ranked = rankLayersByActivation(trace, summary.layers);
    for (std::size_t i = 0; i < limit(ranked.size(), top); ++i) {
        const LayerStats &s = summary.layers[ranked[i]];
        const Layer &layer = trace.layers[s.layer];
        layers.push_back({{"name", layer.path},
                          {"kind", layer.kind},
                          {"parent", layerName(trace, layer.parent)},
                          {"parameter_bytes", layer.parameterBytes},
                          {"activation_bytes", s.activationBytes},
                          {"self_activation_bytes", s.selfActivationBytes},
                          {"forward_ns", s.forwardNs},
                          {"backward_ns", s.backwardNs},
                          {"forward_calls", s.forwardCalls},
                          {"backward_calls", s.backwardCalls}});
    }

    json result = {{"meta", meta},
                   {"events", summary.eventCount},
                   {"reserved_events", trace.reserved.size()},
                   {"first_ns", summary.firstNs},
                   {"last_ns", summary.lastNs},
                   {"step_time_ns", summary.stepTimeNs},
                   {"peak", peak},
                   {"devices", devices},
                   {"live_at_peak", live},
                   {"layers", layers}};
    // The steps last, one line each, written straight out: a trace may hold millions, and
    // a JSON value per figure would take a hundred times their size in memory.
    std::string text = dumpJson(std::move(result));
    text.resize(text.size() - 2); // "\n}", the end of the object
    text += ",\n  \"steps\": [";
    for (std::size_t i = 0; i < summary.steps.size(); ++i) {
        const StepStats &s = summary.steps[i];
        text += i ? ",\n    " : "\n    ";
        text += "{\"number\": " + std::to_string(s.number) + ", \"begin_ns\": " + std::to_string(s.beginNs) + ", \"end_ns\": "
                + std::to_string(s.endNs) + ", \"duration_ns\": " + std::to_string(s.durationNs()) + ", \"start_bytes\": "
                + std::to_string(s.startBytes) + ", \"peak_allocated_bytes\": " + std::to_string(s.peakAllocatedBytes)
                + ", \"peak_time_ns\": " + std::to_string(s.peakTimeNs) + ", \"peak_phase\": \""
                + std::string(phaseName(s.peakPhase)) + "\", \"allocated_bytes\": " + std::to_string(s.allocatedBytes)
                + ", \"allocations\": " + std::to_string(s.allocations) + "}";
    }
    text += summary.steps.empty() ? "]\n}" : "\n  ]\n}";
    return text;
}

} // namespace peaklens
