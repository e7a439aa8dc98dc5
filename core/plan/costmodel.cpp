#include "costmodel.h"

#include "core/analysis/lanedevices.h"
#include "core/analysis/peakfinder.h"
#include "core/error.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <regex>
#include <tuple>
#include <unordered_map>

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

std::int64_t median(std::vector<std::int64_t> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A single step's times are noisy; with several steps the model takes each layer's
// median forward and backward time, and the median step time.
void useMedianTimes(const Trace &trace, CostModel &model)
{
    if (trace.steps.size() < 2)
        return;
    std::vector<std::int64_t> stepTimes;
    for (const Step &step : trace.steps)
        stepTimes.push_back(step.durationNs());
    model.stepTimeNs = median(stepTimes);
    std::unordered_map<std::uint32_t, std::size_t> chainIndex;
    for (std::size_t k = 0; k < model.layers.size(); ++k)
        chainIndex[model.layers[k].layer] = k;
    // Per chain layer and step: the first forward and the last backward, as for the model's step.
    std::vector<std::map<std::int64_t, std::int64_t>> forward(model.layers.size()), backward(model.layers.size());
    for (const Range &range : trace.ranges) {
        const auto found = chainIndex.find(range.layer);
        if (found == chainIndex.end() || range.step == kNoStep)
            continue;
        if (range.phase == Phase::Forward)
            forward[found->second].try_emplace(range.step, range.durationNs());
        else if (range.phase == Phase::Backward)
            backward[found->second][range.step] = range.durationNs();
    }
    for (std::size_t k = 0; k < model.layers.size(); ++k) {
        std::vector<std::int64_t> f, b;
        for (const auto &[step, ns] : forward[k])
            f.push_back(ns);
        for (const auto &[step, ns] : backward[k])
            b.push_back(ns);
        if (f.size() >= 2 && b.size() >= 2) {
            model.layers[k].forwardNs = median(f);
            model.layers[k].backwardNs = median(b);
        }
    }
}

struct Spans
{
    std::uint32_t layer;
    std::int64_t forwardBegin = -1, forwardEnd = -1, backwardBegin = -1, backwardEnd = -1;
};

// For chain layers the trace gives no backward range (traces imported without PeakLens's
// helper), from the frees of the blocks each layer's forward left for the backward: a
// layer's backward begins with the first of them (its output, which the next layer saved
// and released as its own backward ended) and runs until the previous layer's begins; the
// first layer's ends with the last of them. False when the step has no backward.
bool estimateBackwardSpans(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin,
                           std::int64_t end, std::vector<Spans> &chain)
{
    const MemoryEvents &events = trace.events;
    std::int64_t forwardEnd = INT64_MIN;
    for (const Spans &s : chain)
        forwardEnd = std::max(forwardEnd, s.forwardEnd);
    const auto inStep = [&](std::size_t i) {
        return lanes.deviceOfLane[events.lane(i)] == device && events.timeNs(i) >= begin && events.timeNs(i) < end;
    };
    std::optional<std::int64_t> backwardStart;
    for (std::size_t i = 0; i < events.size() && !backwardStart; ++i) {
        if (inStep(i) && events.phase(i) == Phase::Backward && events.deltaBytes(i) > 0 && events.timeNs(i) >= forwardEnd)
            backwardStart = events.timeNs(i);
    }
    if (!backwardStart)
        return false;
    std::unordered_map<std::uint64_t, std::size_t> savedBy; // live block -> the chain layer whose forward made it
    std::vector<std::int64_t> firstFree(chain.size(), INT64_MAX), lastFree(chain.size(), INT64_MIN);
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (!inStep(i))
            continue;
        const std::int64_t t = events.timeNs(i);
        if (events.deltaBytes(i) > 0) {
            savedBy.erase(events.addr(i));
            const auto layer = std::upper_bound(chain.begin(), chain.end(), t, [](std::int64_t time, const Spans &s) {
                return time < s.forwardBegin;
            });
            if (t < *backwardStart && layer != chain.begin() && t <= std::prev(layer)->forwardEnd)
                savedBy[events.addr(i)] = static_cast<std::size_t>(std::prev(layer) - chain.begin());
        } else if (auto block = savedBy.find(events.addr(i)); block != savedBy.end()) {
            if (t >= *backwardStart) {
                firstFree[block->second] = std::min(firstFree[block->second], t);
                lastFree[block->second] = std::max(lastFree[block->second], t);
            }
            savedBy.erase(block);
        }
    }
    // Backward passes run in reverse chain order, each no earlier than the one after it.
    std::int64_t floor = *backwardStart;
    for (std::size_t k = chain.size(); k-- > 0;) {
        if (chain[k].backwardBegin < 0)
            chain[k].backwardBegin = std::max(floor, firstFree[k] == INT64_MAX ? floor : firstFree[k]);
        floor = chain[k].backwardBegin;
    }
    for (std::size_t k = 0; k < chain.size(); ++k) {
        if (chain[k].backwardEnd < 0)
            chain[k].backwardEnd = k > 0 ? chain[k - 1].backwardBegin : std::max(chain[k].backwardBegin, lastFree[k]);
    }
    return true;
}

} // namespace

std::vector<std::uint32_t> defaultChain(const Trace &trace)
{
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
            const auto underscore = name.rfind('_');
            if (underscore == std::string_view::npos || underscore == 0 || !isIndex(name.substr(underscore + 1)))
                continue;
            group = name.substr(0, underscore);
            digits = name.substr(underscore + 1);
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
            const bool usable = named ? !entry.first.second.empty() : entry.first.second.empty() && allNumbered[entry.first.first];
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

CostModel buildCostModel(const Trace &trace, const ChainSelection &selection)
{
    const PeakReport peaks = findPeaks(trace);
    if (!peaks.primary)
        throw Error("The trace allocates no memory, so there is nothing to plan.");
    CostModel model;
    const DevicePeak &peak = peaks.devices[*peaks.primary];
    model.device = peak.device;

    // The step that holds the peak; without steps, the whole trace.
    std::int64_t begin = INT64_MIN, end = INT64_MAX;
    if (auto index = trace.stepAt(peak.timeNs)) {
        model.step = trace.steps[*index].number;
        begin = trace.steps[*index].beginNs;
        end = trace.steps[*index].endNs;
    }

    std::vector<std::uint32_t> candidates;
    if (!selection.layers.empty()) {
        for (std::uint32_t l : selection.layers) {
            if (l >= trace.layers.size())
                throw Error("The chain names layer " + std::to_string(l) + ", which the trace does not have.");
        }
        candidates = selection.layers;
    } else if (selection.layerPattern) {
        std::regex pattern;
        try {
            pattern = std::regex(*selection.layerPattern, std::regex::ECMAScript);
        } catch (const std::regex_error &error) {
            throw Error("\"" + *selection.layerPattern + "\" is not a valid regular expression: " + error.what() + ".");
        }
        for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
            if (std::regex_match(trace.layers[l].path, pattern))
                candidates.push_back(l);
        }
    } else {
        candidates = defaultChain(trace);
    }

    // Each candidate's first forward and last backward range in the step.
    std::unordered_map<std::uint32_t, Spans> spans;
    for (std::uint32_t l : candidates)
        spans[l].layer = l;
    for (const Range &range : trace.ranges) {
        auto it = spans.find(range.layer);
        if (it == spans.end() || range.beginNs < begin || range.endNs > end)
            continue;
        if (model.step && range.step != *model.step && range.step != kNoStep)
            continue;
        Spans &s = it->second;
        if (range.phase == Phase::Forward && s.forwardBegin < 0) {
            s.forwardBegin = range.beginNs;
            s.forwardEnd = range.endNs;
        } else if (range.phase == Phase::Backward) {
            s.backwardBegin = range.beginNs;
            s.backwardEnd = range.endNs;
        }
    }
    const LaneDevices lanes(trace);
    const std::uint32_t device = *lanes.indexOf(model.device);
    std::vector<Spans> chain;
    for (std::uint32_t l : candidates) {
        const Spans &s = spans[l];
        if (s.forwardBegin >= 0)
            chain.push_back(s);
    }
    std::sort(chain.begin(), chain.end(), [](const Spans &a, const Spans &b) { return a.forwardBegin < b.forwardBegin; });
    if (std::any_of(chain.begin(), chain.end(), [](const Spans &s) { return s.backwardBegin < 0; }))
        model.backwardEstimated = estimateBackwardSpans(trace, lanes, device, begin, end, chain);
    std::erase_if(chain, [](const Spans &s) { return s.backwardBegin < 0; });
    if (chain.empty())
        throw Error(!selection.layers.empty() ? std::string("None of the chosen layers runs both forward and backward in the peak's step.")
                    : selection.layerPattern
                        ? "No layer matching \"" + *selection.layerPattern + "\" runs both forward and backward in the peak's step."
                        : std::string("The trace has no chain of repeated layers (blocks.0, blocks.1, ...) that runs forward "
                                      "and backward; choose the chain's layers (plan --layers REGEX, or in the app "
                                      "right-click the layer that holds the blocks)."));
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
        const Spans &a = chain[i], &b = chain[i + 1];
        if (a.forwardEnd > b.forwardBegin || b.backwardEnd > a.backwardBegin || b.forwardEnd > b.backwardBegin)
            throw Error("The layers " + trace.layers[a.layer].path + " and " + trace.layers[b.layer].path
                        + " do not form a chain: each forward must end before the next begins, and the backward "
                          "passes must run in reverse order.");
    }
    if (chain.back().forwardEnd > chain.back().backwardBegin)
        throw Error("The backward of " + trace.layers[chain.back().layer].path + " begins before its forward ends.");

    // The measured curve of the step on the peak's device.
    const MemoryEvents &events = trace.events;
    std::int64_t bytes = 0;
    std::size_t first = 0;
    for (; first < events.size() && events.timeNs(first) < begin; ++first) {
        if (lanes.deviceOfLane[events.lane(first)] == device)
            bytes += events.deltaBytes(first);
    }
    model.stepBeginNs = begin == INT64_MIN ? (first < events.size() ? events.timeNs(first) : 0) : begin;
    const std::int64_t stepEnd = end == INT64_MAX ? (events.empty() ? 0 : events.timeNs(events.size() - 1)) : end;
    model.stepTimeNs = stepEnd - model.stepBeginNs;
    model.curve.push_back({model.stepBeginNs, bytes, 0, Phase::Other});

    const std::size_t n = chain.size();
    model.layers.resize(n);
    std::vector<std::int64_t> forwardEnds(n), backwardBegins(n);
    for (std::size_t i = 0; i < n; ++i) {
        forwardEnds[i] = chain[i].forwardEnd;
        backwardBegins[i] = chain[i].backwardBegin;
    }
    std::sort(backwardBegins.begin(), backwardBegins.end());

    // Blocks allocated in the step and still live: address -> event index.
    std::unordered_map<std::uint64_t, std::size_t> live;
    // Backward begins in time order: the last chain layer's first.
    std::size_t nextBackward = n;
    const auto snapshotSaved = [&](std::size_t k) {
        ChainLayer &layer = model.layers[k];
        std::int64_t latest = INT64_MIN;
        for (const auto &[addr, index] : live) {
            const std::int64_t t = events.timeNs(index);
            if (t >= chain[k].forwardBegin && t < chain[k].forwardEnd) {
                layer.savedBytes += events.deltaBytes(index);
                if (t > latest || (t == latest && events.deltaBytes(index) > layer.outputBytes)) {
                    latest = t;
                    layer.outputBytes = events.deltaBytes(index);
                }
            }
        }
        layer.levelAtBackwardBytes = bytes;
    };
    std::size_t forwardDone = 0, backwardDone = 0;
    for (std::size_t i = first; i < events.size() && events.timeNs(i) < stepEnd + (end == INT64_MAX ? 1 : 0); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != device)
            continue;
        const std::int64_t t = events.timeNs(i);
        while (nextBackward > 0 && chain[nextBackward - 1].backwardBegin <= t)
            snapshotSaved(--nextBackward);
        if (events.deltaBytes(i) > 0)
            live.insert_or_assign(events.addr(i), i);
        else
            live.erase(events.addr(i));
        bytes += events.deltaBytes(i);
        while (forwardDone < n && forwardEnds[forwardDone] <= t)
            ++forwardDone;
        while (backwardDone < n && backwardBegins[backwardDone] <= t)
            ++backwardDone;
        const auto segment = static_cast<std::uint32_t>(forwardDone - std::min(forwardDone, backwardDone));
        if (model.curve.back().timeNs == t)
            model.curve.back() = {t, bytes, segment, events.phase(i)};
        else
            model.curve.push_back({t, bytes, segment, events.phase(i)});
    }
    while (nextBackward > 0)
        snapshotSaved(--nextBackward);

    for (std::size_t k = 0; k < n; ++k) {
        ChainLayer &layer = model.layers[k];
        layer.layer = chain[k].layer;
        layer.path = trace.layers[chain[k].layer].path;
        layer.forwardNs = chain[k].forwardEnd - chain[k].forwardBegin;
        layer.backwardNs = chain[k].backwardEnd - chain[k].backwardBegin;
        layer.backwardBeginNs = chain[k].backwardBegin;
        layer.inputBytes = k > 0 ? model.layers[k - 1].outputBytes : 0;
        // The rise of its forward over the level it began at.
        std::int64_t before = model.curve.front().bytes, highest = INT64_MIN;
        for (const CurvePoint &point : model.curve) {
            if (point.timeNs < chain[k].forwardBegin)
                before = point.bytes;
            else if (point.timeNs < chain[k].forwardEnd)
                highest = std::max(highest, point.bytes);
        }
        layer.forwardRiseBytes = highest == INT64_MIN ? 0 : std::max<std::int64_t>(0, highest - before);
    }

    model.segmentPeakBytes.assign(n + 1, INT64_MIN);
    model.segmentPeakPoint.assign(n + 1, 0);
    for (std::size_t p = 0; p < model.curve.size(); ++p) {
        const CurvePoint &point = model.curve[p];
        if (point.bytes > model.segmentPeakBytes[point.segment]) {
            model.segmentPeakBytes[point.segment] = point.bytes;
            model.segmentPeakPoint[point.segment] = p;
        }
        model.measuredPeakBytes = std::max(model.measuredPeakBytes, point.bytes);
    }
    useMedianTimes(trace, model);
    return model;
}

} // namespace peaklens
