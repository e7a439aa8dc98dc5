// SPDX-License-Identifier: Apache-2.0
#include "layeredits.h"

#include "tracebuilder.h"

#include "core/error.h"

#include <map>
#include <tuple>

namespace peaklens {

namespace {

// The trace with old layer i at pathOf[i]; layers given one path become one.
Trace withLayerPaths(const Trace &trace, const std::vector<std::string> &pathOf)
{
    TraceBuilder builder;
    std::vector<std::uint32_t> newId(trace.layers.size());
    for (std::size_t l = 0; l < trace.layers.size(); ++l)
        newId[l] = builder.layer(pathOf[l]);
    for (std::size_t l = trace.layers.size(); l-- > 0;) { // parents last: a merged layer keeps the surviving one's
        const Layer &layer = trace.layers[l];
        if (!layer.kind.empty() || layer.parameterBytes != 0)
            builder.setLayerInfo(newId[l], layer.kind, layer.parameterBytes);
    }
    Trace out = trace;
    out.layers = builder.finish()->layers;
    for (std::size_t i = 0; i < out.events.size(); ++i) {
        if (const std::uint32_t layer = out.events.layer(i); layer != kNoLayer)
            out.events.setLayer(i, newId[layer]);
    }
    // A merged layer's ranges lie inside its parent's: keep only the outermost.
    std::map<std::tuple<std::uint32_t, Phase, std::uint32_t, std::int64_t>, std::int64_t>
        lastEnd; // per layer, phase, thread, step
    std::vector<Range> ranges;
    for (Range range : trace.ranges) {
        if (range.layer != kNoLayer) {
            range.layer = newId[range.layer];
            auto [it, inserted] = lastEnd.try_emplace({range.layer, range.phase, range.thread, range.step}, range.endNs);
            if (!inserted && range.endNs <= it->second)
                continue;
            it->second = std::max(it->second, range.endNs);
        }
        ranges.push_back(range);
    }
    out.ranges = std::move(ranges);
    return out;
}

// "blocks[3]" for "model:142.blocks[3]".
std::string_view lastComponent(std::string_view path)
{
    const auto dot = path.rfind('.');
    return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::vector<std::string> currentPaths(const Trace &trace)
{
    std::vector<std::string> paths;
    for (const Layer &layer : trace.layers)
        paths.push_back(layer.path);
    return paths;
}

// Moves `layer` and everything under it from its path to `to`.
void movePaths(const Trace &trace, std::uint32_t layer, const std::string &to, std::vector<std::string> &paths)
{
    const std::string &from = trace.layers.at(layer).path;
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        if (trace.isWithin(l, layer))
            paths[l] = to + trace.layers[l].path.substr(from.size());
    }
}

} // namespace

Trace renameLayer(const Trace &trace, std::uint32_t layer, std::string_view name)
{
    if (name.empty() || name.find('.') != std::string_view::npos)
        throw Error("A layer's name cannot be empty or hold a '.': \"" + std::string(name) + "\" would not be one name.");
    const Layer &target = trace.layers.at(layer);
    const std::string parentPath = target.parent == kNoLayer ? std::string() : trace.layers[target.parent].path + ".";
    // A call of a loop renames the loop: each of its calls keeps its number.
    std::vector<std::pair<std::uint32_t, std::string>> renamed;
    const auto call = loopCall(target.name());
    if (call && !loopCall(name)) {
        for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
            const auto sibling = loopCall(trace.layers[l].name());
            if (trace.layers[l].parent == target.parent && sibling && sibling->loop == call->loop)
                renamed.emplace_back(l, parentPath + std::string(name) + "[" + std::to_string(sibling->index) + "]");
        }
    } else {
        renamed.emplace_back(layer, parentPath + std::string(name));
    }
    std::vector<std::string> paths = currentPaths(trace);
    for (const auto &[l, path] : renamed) {
        if (path != trace.layers[l].path && trace.findLayer(path))
            throw Error("A layer named \"" + std::string(lastComponent(path)) + "\" is there already; merge them instead.");
        movePaths(trace, l, path, paths);
    }
    return withLayerPaths(trace, paths);
}

Trace mergeIntoParent(const Trace &trace, std::uint32_t layer)
{
    const Layer &target = trace.layers.at(layer);
    if (target.parent == kNoLayer)
        throw Error("The layer " + target.path + " is at the top of the tree: there is nothing to merge it into.");
    std::vector<std::string> paths = currentPaths(trace);
    movePaths(trace, layer, trace.layers[target.parent].path, paths);
    return withLayerPaths(trace, paths);
}

} // namespace peaklens
