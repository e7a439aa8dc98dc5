// SPDX-License-Identifier: Apache-2.0
#include "chainselection.h"

#include "backwardestimate.h"

#include "core/analysis/lanedevices.h"
#include "core/error.h"
#include "core/trace/metadata.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <regex>
#include <tuple>

namespace peaklens {

namespace {

bool isIndex(std::string_view name)
{
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::size_t depthOf(const Trace &trace, std::uint32_t layer)
{
    std::size_t depth = 0;
    for (std::uint32_t l = layer; l != kNoLayer; l = trace.layers[l].parent)
        ++depth;
    return depth;
}

} // namespace

std::vector<std::uint32_t> defaultChain(const Trace &trace)
{
    // The chain its writer named, when every layer in it is in the trace.
    if (const std::string named = trace.metaValue(metakey::Chain); !named.empty()) {
        std::vector<std::uint32_t> chain;
        for (std::size_t begin = 0; begin <= named.size();) {
            const std::size_t comma = std::min(named.find(',', begin), named.size());
            const auto layer = trace.findLayer(std::string_view(named).substr(begin, comma - begin));
            if (!layer) {
                chain.clear();
                break;
            }
            chain.push_back(*layer);
            begin = comma + 1;
        }
        if (!chain.empty())
            return chain;
    }
    // Per parent and group: the numbered children. "" is a ModuleList's (every child a
    // number); a class name is Kineto's ("Block_3", its name for the fourth Block).
    std::map<std::pair<std::uint32_t, std::string>, std::vector<std::pair<long, std::uint32_t>>> groups;
    std::map<std::uint32_t, bool> allNumbered;
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        const std::uint32_t parent = trace.layers[l].parent;
        if (parent == kNoLayer)
            continue;
        const std::string_view name = trace.layers[l].name();
        auto [it, inserted] = allNumbered.try_emplace(parent, true);
        std::string_view group, digits = name;
        if (!isIndex(name)) {
            it->second = false;
            // "model:253[3]": the fourth call of a loop, as layers from call stacks are named.
            const auto underscore = name.rfind('_');
            if (const auto call = loopCall(name)) {
                groups[{parent, std::string(call->loop)}].emplace_back(call->index, l);
                continue;
            }
            if (underscore != std::string_view::npos && underscore > 0 && isIndex(name.substr(underscore + 1))) {
                group = name.substr(0, underscore);
                digits = name.substr(underscore + 1);
            } else {
                continue;
            }
        }
        long index = 0;
        std::from_chars(digits.data(), digits.data() + digits.size(), index);
        groups[{parent, std::string(group)}].emplace_back(index, l);
    }
    const auto rank = [&](const auto &entry) {
        const auto &list = entry.second;
        const std::string &kind = trace.layers[list.front().second].kind;
        const bool oneKind = !kind.empty() && std::all_of(list.begin(), list.end(), [&](const auto &child) {
            return trace.layers[child.second].kind == kind;
        });
        return std::tuple(oneKind, list.size(), depthOf(trace, entry.first.first));
    };
    // A ModuleList's blocks as the helper chooses them; only without one, Kineto's Block_N.
    const decltype(groups)::value_type *best = nullptr;
    for (const bool named : {false, true}) {
        for (const auto &entry : groups) {
            const bool usable =
                named ? !entry.first.second.empty() : entry.first.second.empty() && allNumbered[entry.first.first];
            if (usable && entry.second.size() >= 2 && (!best || rank(entry) > rank(*best)))
                best = &entry;
        }
        if (best)
            break;
    }
    std::vector<std::uint32_t> chain;
    if (best) {
        auto list = best->second;
        std::sort(list.begin(), list.end());
        for (const auto &[index, layer] : list)
            chain.push_back(layer);
    }
    return chain;
}

std::unordered_map<std::uint32_t, LayerRanges> rangesIn(const Trace &trace, const std::vector<std::uint32_t> &layers,
                                                        std::int64_t begin, std::int64_t end, std::optional<std::int64_t> step)
{
    std::unordered_map<std::uint32_t, LayerRanges> found;
    for (std::uint32_t l : layers)
        found[l];
    // Ranges are sorted by begin: only those that begin inside [begin, end] are read, so a
    // step's ranges cost the step, not the whole trace.
    const auto first = std::lower_bound(trace.ranges.begin(), trace.ranges.end(), begin,
                                        [](const Range &range, std::int64_t t) { return range.beginNs < t; });
    for (auto range = first; range != trace.ranges.end() && range->beginNs <= end; ++range) {
        auto it = found.find(range->layer);
        if (it == found.end() || range->endNs > end)
            continue;
        if (step && range->step != *step && range->step != kNoStep)
            continue;
        if (range->phase == Phase::Forward)
            it->second.forward.emplace_back(range->beginNs, range->endNs);
        else if (range->phase == Phase::Backward)
            it->second.backward.emplace_back(range->beginNs, range->endNs);
    }
    for (auto &entry : found) {
        LayerRanges &ranges = entry.second;
        std::sort(ranges.forward.begin(), ranges.forward.end());
        std::sort(ranges.backward.begin(), ranges.backward.end());
        std::erase_if(ranges.forward, [&](const Interval &f) {
            return std::any_of(ranges.backward.begin(), ranges.backward.end(),
                               [&](const Interval &b) { return b.first <= f.first && f.second <= b.second; });
        });
    }
    return found;
}

namespace {

std::vector<std::uint32_t> chainCandidates(const Trace &trace, const ChainSelection &selection)
{
    if (!selection.layers.empty()) {
        for (std::uint32_t l : selection.layers) {
            if (l >= trace.layers.size())
                throw Error("The chain names layer " + std::to_string(l) + ", which the trace does not have.");
        }
        return selection.layers;
    }
    if (!selection.layerPattern)
        return defaultChain(trace);
    // std::regex compiles recursively, a stack frame per term: a long pattern would overflow it.
    if (selection.layerPattern->size() > ChainSelection::kMaxLayerPatternLength)
        throw Error("The layer pattern is " + std::to_string(selection.layerPattern->size())
                    + " characters long; PeakLens takes at most " + std::to_string(ChainSelection::kMaxLayerPatternLength) + ".");
    std::regex pattern;
    try {
        pattern = std::regex(*selection.layerPattern, std::regex::ECMAScript);
    } catch (const std::regex_error &error) {
        throw Error("\"" + *selection.layerPattern + "\" is not a valid regular expression: " + error.what() + ".");
    }
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        if (std::regex_match(trace.layers[l].path, pattern))
            candidates.push_back(l);
    }
    return candidates;
}

// The chain's passes in the step: pass m holds each layer's m-th forward and m-th backward,
// in forward order. Backward spans the trace lacks are estimated (`estimated` set).
std::vector<std::vector<UnitSpans>> chainPasses(const Trace &trace, const std::vector<std::uint32_t> &candidates,
                                                const LaneDevices &lanes, std::uint32_t device, std::int64_t begin,
                                                std::int64_t end, std::optional<std::int64_t> step, bool &estimated)
{
    const auto ranges = rangesIn(trace, candidates, begin, end, step);
    std::vector<std::uint32_t> layers;
    for (std::uint32_t l : candidates) {
        if (!ranges.at(l).forward.empty())
            layers.push_back(l);
    }
    std::vector<std::vector<UnitSpans>> passes;
    if (layers.empty())
        return passes;
    const std::size_t count = ranges.at(layers.front()).forward.size();
    for (std::uint32_t l : layers) {
        const LayerRanges &r = ranges.at(l);
        if (r.forward.size() != count)
            throw Error(trace.layers[l].path + " runs its forward " + std::to_string(r.forward.size()) + " times in the step and "
                        + trace.layers[layers.front()].path + " " + std::to_string(count)
                        + "; a chain's layers run once per pass (micro-batch).");
        if (!r.backward.empty() && r.backward.size() != count)
            throw Error(trace.layers[l].path + " runs its forward " + std::to_string(count)
                        + " times in the step but its backward " + std::to_string(r.backward.size()) + " times.");
    }
    passes.resize(count);
    for (std::size_t m = 0; m < count; ++m) {
        for (std::uint32_t l : layers) {
            const LayerRanges &r = ranges.at(l);
            UnitSpans s{l, r.forward[m].first, r.forward[m].second};
            if (!r.backward.empty())
                std::tie(s.backwardBegin, s.backwardEnd) = r.backward[m];
            passes[m].push_back(s);
        }
        std::sort(passes[m].begin(), passes[m].end(),
                  [](const UnitSpans &a, const UnitSpans &b) { return a.forwardBegin < b.forwardBegin; });
    }
    for (std::size_t m = 0; m < count; ++m) {
        if (std::none_of(passes[m].begin(), passes[m].end(), [](const UnitSpans &s) { return s.backwardBegin < 0; }))
            continue;
        const std::int64_t windowBegin = m == 0 ? begin : passes[m].front().forwardBegin;
        const std::int64_t windowEnd = m + 1 < count ? passes[m + 1].front().forwardBegin : end;
        estimated = estimateBackwardSpans(trace, lanes, device, windowBegin, windowEnd, passes[m]) || estimated;
    }
    // A layer without a backward in some pass leaves the chain in all of them.
    std::vector<std::uint32_t> incomplete;
    for (const auto &pass : passes) {
        for (const UnitSpans &s : pass) {
            if (s.backwardBegin < 0)
                incomplete.push_back(s.layer);
        }
    }
    for (auto &pass : passes)
        std::erase_if(pass, [&](const UnitSpans &s) {
            return std::find(incomplete.begin(), incomplete.end(), s.layer) != incomplete.end();
        });
    if (passes.front().empty())
        passes.clear();
    return passes;
}

void checkChainOrder(const Trace &trace, const std::vector<UnitSpans> &chain)
{
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
        const UnitSpans &a = chain[i], &b = chain[i + 1];
        if (a.forwardEnd > b.forwardBegin || b.backwardEnd > a.backwardBegin || b.forwardEnd > b.backwardBegin)
            throw Error("The layers " + trace.layers[a.layer].path + " and " + trace.layers[b.layer].path
                        + " do not form a chain: each forward must end before the next begins, and the backward "
                          "passes must run in reverse order.");
    }
    if (chain.back().forwardEnd > chain.back().backwardBegin)
        throw Error("The backward of " + trace.layers[chain.back().layer].path + " begins before its forward ends.");
}

// Per chain layer, its descendants in the trace's layer tree.
std::vector<std::vector<std::uint32_t>> descendantsOf(const Trace &trace, const std::vector<UnitSpans> &chain)
{
    std::unordered_map<std::uint32_t, std::size_t> chainIndex;
    for (std::size_t k = 0; k < chain.size(); ++k)
        chainIndex[chain[k].layer] = k;
    std::vector<std::vector<std::uint32_t>> descendants(chain.size());
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        for (std::uint32_t up = trace.layers[l].parent; up != kNoLayer; up = trace.layers[up].parent) {
            if (auto found = chainIndex.find(up); found != chainIndex.end()) {
                descendants[found->second].push_back(l);
                break;
            }
        }
    }
    return descendants;
}

// Per chain layer, its parts: the modules inside it that run forward and backward once per
// pass within the layer's own spans, in forward order.
std::vector<std::vector<std::vector<UnitSpans>>> partsOf(const Trace &trace, const std::vector<std::vector<UnitSpans>> &passes,
                                                         std::int64_t begin, std::int64_t end, std::optional<std::int64_t> step)
{
    const std::size_t passCount = passes.size();
    const auto descendants = descendantsOf(trace, passes.front());
    std::vector<std::uint32_t> all;
    for (const auto &list : descendants)
        all.insert(all.end(), list.begin(), list.end());
    const auto ranges = rangesIn(trace, all, begin, end, step);
    std::vector<std::vector<std::vector<UnitSpans>>> parts(descendants.size());
    for (std::size_t k = 0; k < descendants.size(); ++k) {
        std::vector<std::pair<std::int64_t, std::uint32_t>> found; // (first forward, layer)
        for (std::uint32_t l : descendants[k]) {
            const LayerRanges &r = ranges.at(l);
            if (r.forward.size() != passCount || r.backward.size() != passCount)
                continue;
            bool inside = true;
            for (std::size_t m = 0; m < passCount && inside; ++m) {
                const UnitSpans &s = passes[m][k];
                inside = s.forwardBegin <= r.forward[m].first && r.forward[m].second <= s.forwardEnd
                         && s.backwardBegin <= r.backward[m].first && r.backward[m].second <= s.backwardEnd;
            }
            if (inside)
                found.emplace_back(r.forward.front().first, l);
        }
        std::sort(found.begin(), found.end());
        if (found.size() > ChainUnits::kMostParts)
            found.resize(ChainUnits::kMostParts);
        for (const auto &[first, l] : found) {
            const LayerRanges &r = ranges.at(l);
            std::vector<UnitSpans> spans;
            for (std::size_t m = 0; m < passCount; ++m)
                spans.push_back({l, r.forward[m].first, r.forward[m].second, r.backward[m].first, r.backward[m].second});
            parts[k].push_back(std::move(spans));
        }
    }
    return parts;
}

} // namespace

ChainUnits chooseChain(const Trace &trace, const ChainSelection &selection, const LaneDevices &lanes, std::uint32_t device,
                       std::int64_t begin, std::int64_t end, std::optional<std::int64_t> step)
{
    ChainUnits units;
    units.passes =
        chainPasses(trace, chainCandidates(trace, selection), lanes, device, begin, end, step, units.backwardEstimated);
    if (units.passes.empty())
        throw Error(!selection.layers.empty()
                        ? std::string("None of the chosen layers runs both forward and backward in the peak's step.")
                    : selection.layerPattern
                        ? "No layer matching \"" + *selection.layerPattern
                              + "\" runs both forward and backward in the peak's step."
                        : std::string("The trace has no chain of repeated layers (blocks.0, blocks.1, ...) that runs forward "
                                      "and backward; choose the chain's layers (plan --layers REGEX, or in the app "
                                      "right-click the layer that holds the blocks)."));
    for (const auto &pass : units.passes)
        checkChainOrder(trace, pass);
    units.parts = partsOf(trace, units.passes, begin, end, step);
    return units;
}

} // namespace peaklens
