#include "costmodel.h"

#include "chainmeasure.h"

#include "core/analysis/lanedevices.h"
#include "core/analysis/peakfinder.h"
#include "core/error.h"
#include "core/trace/metadata.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
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

// The median absolute deviation from `center`: one value ten times the others leaves it alone.
std::int64_t medianDeviation(const std::vector<std::int64_t> &values, std::int64_t center)
{
    std::vector<std::int64_t> deviations;
    for (std::int64_t value : values)
        deviations.push_back(std::abs(value - center));
    return median(std::move(deviations));
}

std::int64_t totalNs(const std::vector<Interval> &intervals)
{
    std::int64_t ns = 0;
    for (const auto &[begin, end] : intervals)
        ns += end - begin;
    return ns;
}

} // namespace

void useMedianStepTime(CostModel &model, const std::vector<std::int64_t> &stepTimesNs)
{
    if (stepTimesNs.size() < 2)
        return;
    model.stepTimeNs = median(stepTimesNs);
    // The median absolute deviation: a warm-up step ten times as long leaves it alone.
    model.stepTimeSpreadNs = medianDeviation(stepTimesNs, model.stepTimeNs);
}

namespace {

// A single step's times are noisy; with several steps the model takes, per chain layer,
// the median over the steps of its forward and backward time in a step (all passes), and
// the median step time.
void useMedianTimes(const Trace &trace, CostModel &model)
{
    if (trace.steps.size() < 2)
        return;
    std::vector<std::int64_t> stepTimes;
    for (const Step &step : trace.steps)
        stepTimes.push_back(step.durationNs());
    useMedianStepTime(model, stepTimes);
    std::vector<std::uint32_t> layers;
    for (const ChainLayer &layer : model.layers)
        layers.push_back(layer.layer);
    std::vector<std::vector<std::int64_t>> forward(layers.size()), backward(layers.size());
    for (const Step &step : trace.steps) {
        const auto ranges = rangesIn(trace, layers, step.beginNs, step.endNs, step.number);
        for (std::size_t k = 0; k < layers.size(); ++k) {
            const LayerRanges &r = ranges.at(layers[k]);
            // Traces imported without the helper range no backward: their forwards still count.
            if (r.forward.size() == model.passes)
                forward[k].push_back(totalNs(r.forward));
            if (r.backward.size() == model.passes)
                backward[k].push_back(totalNs(r.backward));
        }
    }
    std::vector<std::int64_t> deviations;
    for (std::size_t k = 0; k < layers.size(); ++k) {
        if (forward[k].size() >= 2) {
            model.layers[k].forwardNs = median(forward[k]);
            deviations.push_back(medianDeviation(forward[k], model.layers[k].forwardNs));
            model.layers[k].recomputeSpreadNs = deviations.back();
        }
        if (backward[k].size() >= 2)
            model.layers[k].backwardNs = median(backward[k]);
    }
    if (!deviations.empty())
        model.recomputeSpreadNs = median(deviations);
}

// A layer far slower than the chain's others (at least 3 layers) in the one step the model
// reads: the first call of a fresh process (CUDA context, cuDNN's algorithm search, lazy
// initialisation), not what a recompute will cost. Its time is flagged and the chain's
// median taken instead; the spread of the others stays the recompute's spread.
constexpr std::int64_t kOutlierFactor = 3;

void flagTimeOutliers(CostModel &model)
{
    if (model.layers.size() < 3)
        return;
    const auto flag = [&](std::int64_t ChainLayer::*time, std::optional<std::int64_t> ChainLayer::*outlier) {
        std::vector<std::int64_t> times;
        for (const ChainLayer &layer : model.layers)
            times.push_back(layer.*time);
        const std::int64_t typical = median(times);
        const std::int64_t spread = medianDeviation(times, typical);
        for (ChainLayer &layer : model.layers) {
            const std::int64_t measured = layer.*time;
            if (typical > 0 && measured > kOutlierFactor * typical && measured - typical > kOutlierFactor * spread) {
                layer.*outlier = measured;
                layer.*time = typical;
            }
        }
        return spread;
    };
    const std::int64_t forwardSpread = flag(&ChainLayer::forwardNs, &ChainLayer::outlierForwardNs);
    // Backward spans estimated from frees hold what runs between the layers' backwards too:
    // only measured ones are judged.
    if (!model.backwardEstimated)
        flag(&ChainLayer::backwardNs, &ChainLayer::outlierBackwardNs);
    model.recomputeSpreadNs = std::max(model.recomputeSpreadNs, forwardSpread);
}

// What a checkpoint adds to a step is its forward time, unless the trace carries a
// measurement (peaklens-replay's calibration steps): on a CPU a forward without a graph
// and a recompute reuse memory warm in the cache and cost less than the measured forward.
void useMeasuredCheckpointCosts(const Trace &trace, CostModel &model)
{
    for (ChainLayer &layer : model.layers) {
        layer.recomputeNs = layer.forwardNs;
        layer.recomputeSpreadNs = std::max(layer.recomputeSpreadNs, model.recomputeSpreadNs);
        for (ChainPart &part : layer.parts)
            part.recomputeSpreadNs = model.recomputeSpreadNs;
    }
    const auto object = [&](std::string_view key) {
        const std::string text = trace.metaValue(key);
        nlohmann::json value = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        return value.is_object() ? value : nlohmann::json::object();
    };
    const nlohmann::json costs = object(metakey::CheckpointCosts), spreads = object(metakey::CheckpointCostSpreads);
    // At least a nanosecond: a recompute runs its forward again, and a cost the rounds'
    // noise took to nothing would make a checkpoint free, chosen where none is needed.
    const auto read = [](const nlohmann::json &values, const std::string &path, std::int64_t &into, std::int64_t least) {
        if (values.contains(path) && values[path].is_number_integer())
            into = std::max(least, values[path].get<std::int64_t>());
    };
    for (ChainLayer &layer : model.layers) {
        for (ChainPart &part : layer.parts) {
            read(costs, part.path, part.recomputeNs, 1);
            read(spreads, part.path, part.recomputeSpreadNs, 0);
        }
    }
    const bool all = std::all_of(model.layers.begin(), model.layers.end(), [&](const ChainLayer &layer) {
        return costs.contains(layer.path) && costs[layer.path].is_number_integer();
    });
    if (!all)
        return;
    for (ChainLayer &layer : model.layers) {
        read(costs, layer.path, layer.recomputeNs, 1);
        read(spreads, layer.path, layer.recomputeSpreadNs, 0);
    }
    model.recomputeMeasured = true;
}

// Each chain layer's segment forward cut where its parts' forwards end (ChainLayer::
// forwardPieces): a part ended in this pass when its forward ended since the segment's
// forward stretch began.
void cutForwardAtParts(CostModel &model)
{
    std::size_t stretchSegment = SIZE_MAX;
    bool stretchBackwardSide = false;
    std::int64_t stretchBegin = 0;
    for (CurvePoint &point : model.curve) {
        if (point.segment != stretchSegment || point.backwardSide != stretchBackwardSide) {
            stretchSegment = point.segment;
            stretchBackwardSide = point.backwardSide;
            stretchBegin = point.timeNs;
        }
        if (point.backwardSide || point.backwardOf != kNoChainLayer || point.segment >= model.layers.size())
            continue;
        ChainLayer &layer = model.layers[point.segment];
        if (layer.parts.empty())
            continue;
        for (std::size_t c = 0; c < layer.parts.size(); ++c) {
            const auto &ends = layer.parts[c].forwardEndsNs;
            if (std::any_of(ends.begin(), ends.end(), [&](std::int64_t end) { return end >= stretchBegin && end <= point.timeNs; }))
                point.partsEnded |= std::uint64_t(1) << c;
        }
        if (point.partsEnded == 0) {
            if (point.bytes > layer.forwardBeforePartsBytes) {
                layer.forwardBeforePartsBytes = point.bytes;
                layer.forwardBeforePartsTimeNs = point.timeNs;
            }
            continue;
        }
        auto piece = std::find_if(layer.forwardPieces.begin(), layer.forwardPieces.end(),
                                  [&](const ForwardPiece &p) { return p.ended == point.partsEnded; });
        if (piece == layer.forwardPieces.end())
            piece = layer.forwardPieces.insert(layer.forwardPieces.end(), ForwardPiece{point.partsEnded});
        if (point.bytes > piece->peakBytes) {
            piece->peakBytes = point.bytes;
            piece->peakTimeNs = point.timeNs;
        }
    }
}

using Spans = ChainSpans;

// For chain layers the trace gives no backward range (traces imported without PeakLens's
// helper), from the frees of the blocks each layer's forward left for the backward: a
// layer's backward begins with the first of them (its output, which the next layer saved
// and released as its own backward ended) and runs until the previous layer's begins; the
// first layer's ends with the last of them. `chain` is one pass, within [begin, end).
// False when the pass has no backward.
bool estimateBackwardSpans(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin,
                           std::int64_t end, std::vector<Spans> &chain)
{
    const MemoryEvents &events = trace.events;
    std::int64_t forwardEnd = INT64_MIN;
    for (const Spans &s : chain)
        forwardEnd = std::max(forwardEnd, s.forwardEnd);
    const auto inPass = [&](std::size_t i) {
        return lanes.deviceOfLane[events.lane(i)] == device && events.timeNs(i) >= begin && events.timeNs(i) < end;
    };
    std::optional<std::int64_t> backwardStart;
    for (std::size_t i = 0; i < events.size() && !backwardStart; ++i) {
        if (inPass(i) && events.phase(i) == Phase::Backward && events.deltaBytes(i) > 0 && events.timeNs(i) >= forwardEnd)
            backwardStart = events.timeNs(i);
    }
    if (!backwardStart)
        return false;
    std::unordered_map<std::uint64_t, std::size_t> savedBy; // live block -> the chain layer whose forward made it
    std::vector<std::int64_t> firstFree(chain.size(), INT64_MAX), lastFree(chain.size(), INT64_MIN);
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (!inPass(i))
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
std::vector<std::vector<Spans>> chainPasses(const Trace &trace, const std::vector<std::uint32_t> &candidates,
                                            const LaneDevices &lanes, std::uint32_t device, std::int64_t begin,
                                            std::int64_t end, std::optional<std::int64_t> step, bool &estimated)
{
    const auto ranges = rangesIn(trace, candidates, begin, end, step);
    std::vector<std::uint32_t> layers;
    for (std::uint32_t l : candidates) {
        if (!ranges.at(l).forward.empty())
            layers.push_back(l);
    }
    std::vector<std::vector<Spans>> passes;
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
            throw Error(trace.layers[l].path + " runs its forward " + std::to_string(count) + " times in the step but its backward "
                        + std::to_string(r.backward.size()) + " times.");
    }
    passes.resize(count);
    for (std::size_t m = 0; m < count; ++m) {
        for (std::uint32_t l : layers) {
            const LayerRanges &r = ranges.at(l);
            Spans s{l, r.forward[m].first, r.forward[m].second};
            if (!r.backward.empty())
                std::tie(s.backwardBegin, s.backwardEnd) = r.backward[m];
            passes[m].push_back(s);
        }
        std::sort(passes[m].begin(), passes[m].end(), [](const Spans &a, const Spans &b) { return a.forwardBegin < b.forwardBegin; });
    }
    for (std::size_t m = 0; m < count; ++m) {
        if (std::none_of(passes[m].begin(), passes[m].end(), [](const Spans &s) { return s.backwardBegin < 0; }))
            continue;
        const std::int64_t windowBegin = m == 0 ? begin : passes[m].front().forwardBegin;
        const std::int64_t windowEnd = m + 1 < count ? passes[m + 1].front().forwardBegin : end;
        estimated = estimateBackwardSpans(trace, lanes, device, windowBegin, windowEnd, passes[m]) || estimated;
    }
    // A layer without a backward in some pass leaves the chain in all of them.
    std::vector<std::uint32_t> incomplete;
    for (const auto &pass : passes) {
        for (const Spans &s : pass) {
            if (s.backwardBegin < 0)
                incomplete.push_back(s.layer);
        }
    }
    for (auto &pass : passes)
        std::erase_if(pass, [&](const Spans &s) { return std::find(incomplete.begin(), incomplete.end(), s.layer) != incomplete.end(); });
    if (passes.front().empty())
        passes.clear();
    return passes;
}

void checkChainOrder(const Trace &trace, const std::vector<Spans> &chain)
{
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
        const Spans &a = chain[i], &b = chain[i + 1];
        if (a.forwardEnd > b.forwardBegin || b.backwardEnd > a.backwardBegin || b.forwardEnd > b.backwardBegin)
            throw Error("The layers " + trace.layers[a.layer].path + " and " + trace.layers[b.layer].path
                        + " do not form a chain: each forward must end before the next begins, and the backward "
                          "passes must run in reverse order.");
    }
    if (chain.back().forwardEnd > chain.back().backwardBegin)
        throw Error("The backward of " + trace.layers[chain.back().layer].path + " begins before its forward ends.");
}

// One chain layer in one pass, as the walk over the step's events measures it.
struct PassLayer
{
    std::size_t firstEvent = 0;                                 // the first event of its forward
    std::vector<std::pair<std::uint64_t, std::size_t>> blocks;  // (address, event): allocated in its forward
    std::int64_t ownBytes = 0, forwardRise = 0;                 // its forward's own blocks live, and their most
    std::int64_t retained = 0, output = 0, aliveAtBackward = 0, saving = 0, regenerated = 0, kept = 0;
    std::int64_t level = 0, backwardBegin = 0;
    // Its backward when checkpointed: the measured level plus what the checkpoint holds
    // that the measured step has freed by then (`held`), and the highest of that.
    std::int64_t otherRegenerated = 0, held = 0, mostHeld = 0, backwardPeak = 0, backwardPeakTime = 0;
    std::size_t outputEvent = SIZE_MAX, gradientEvent = SIZE_MAX; // allocating events
    bool outputLive = false, gradientLive = false;
    void updateHeld() { held = otherRegenerated + (outputLive ? 0 : output) + (gradientLive ? 0 : output); }
};

enum class Edge { ForwardEnd, BackwardEnd, ForwardBegin, BackwardBegin }; // in this order at equal times

struct Boundary
{
    std::int64_t timeNs;
    Edge edge;
    std::size_t pass, layer;
    auto key() const { return std::tuple(timeNs, edge); }
};


} // namespace

std::int64_t ChainLayer::partSavingBytes(std::uint64_t chosen) const
{
    std::int64_t bytes = 0;
    for (std::size_t c = 0; c < parts.size(); ++c)
        bytes += (chosen >> c & 1u) ? parts[c].savingBytes : 0;
    return bytes;
}

std::pair<std::int64_t, std::int64_t> ChainLayer::backwardPeakWithParts(std::uint64_t chosen) const
{
    if (chosen == 0 || backwardPieces.empty())
        return {backwardLevelPeakBytes, backwardLevelPeakTimeNs};
    std::pair<std::int64_t, std::int64_t> peak{INT64_MIN, 0};
    for (const BackwardPiece &piece : backwardPieces) {
        std::int64_t bytes = piece.levelPeakBytes;
        if (piece.recomputeOf != SIZE_MAX && !(chosen >> piece.recomputeOf & 1u))
            continue;
        // A chosen part running its backward (at most one: chosen parts do not nest).
        for (const auto &[part, held] : piece.heldPeakBytes) {
            if (chosen >> part & 1u)
                bytes = held;
        }
        if (bytes == INT64_MIN)
            continue;
        bytes -= partSavingBytes(piece.pending & chosen);
        if (bytes > peak.first)
            peak = {bytes, piece.levelPeakTimeNs};
    }
    return peak;
}

std::pair<std::int64_t, std::int64_t> ChainLayer::forwardPeakWithParts(std::uint64_t chosen) const
{
    std::pair<std::int64_t, std::int64_t> peak{INT64_MIN, 0};
    for (const ForwardPiece &piece : forwardPieces) {
        const std::int64_t bytes = piece.peakBytes - partSavingBytes(piece.ended & chosen);
        if (bytes > peak.first)
            peak = {bytes, piece.peakTimeNs};
    }
    return peak;
}

std::int64_t CostModel::forwardBeforePartsBytes(std::size_t p) const
{
    if (p < layers.size() && !layers[p].forwardPieces.empty())
        return layers[p].forwardBeforePartsBytes;
    return p < forwardPeakBytes.size() ? forwardPeakBytes[p] : INT64_MIN;
}

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
    return buildCostModel(trace, selection, findPeaks(trace));
}

CostModel buildCostModel(const Trace &trace, const ChainSelection &selection, const PeakReport &peaks)
{
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
    const LaneDevices lanes(trace);
    const std::uint32_t device = *lanes.indexOf(model.device);
    const std::vector<std::vector<Spans>> passes =
        chainPasses(trace, chainCandidates(trace, selection), lanes, device, begin, end, model.step, model.backwardEstimated);
    if (passes.empty())
        throw Error(!selection.layers.empty() ? std::string("None of the chosen layers runs both forward and backward in the peak's step.")
                    : selection.layerPattern
                        ? "No layer matching \"" + *selection.layerPattern + "\" runs both forward and backward in the peak's step."
                        : std::string("The trace has no chain of repeated layers (blocks.0, blocks.1, ...) that runs forward "
                                      "and backward; choose the chain's layers (plan --layers REGEX, or in the app "
                                      "right-click the layer that holds the blocks)."));
    for (const auto &pass : passes)
        checkChainOrder(trace, pass);
    const std::size_t n = passes.front().size();
    model.passes = passes.size();

    std::vector<Boundary> boundaries;
    for (std::size_t m = 0; m < passes.size(); ++m) {
        for (std::size_t k = 0; k < n; ++k) {
            const Spans &s = passes[m][k];
            boundaries.push_back({s.forwardBegin, Edge::ForwardBegin, m, k});
            boundaries.push_back({s.forwardEnd, Edge::ForwardEnd, m, k});
            boundaries.push_back({s.backwardBegin, Edge::BackwardBegin, m, k});
            boundaries.push_back({s.backwardEnd, Edge::BackwardEnd, m, k});
        }
    }
    std::sort(boundaries.begin(), boundaries.end(), [](const Boundary &a, const Boundary &b) { return a.key() < b.key(); });

    // The level as the step begins.
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
    model.curve.push_back({model.stepBeginNs, bytes, 0, false, Phase::Other});

    // Walk the step's events, measuring each layer of each pass at its boundaries.
    std::vector<std::vector<PassLayer>> measured(passes.size(), std::vector<PassLayer>(n));
    std::unordered_map<std::uint64_t, std::size_t> live; // address -> allocating event
    const auto stillLive = [&](const std::pair<std::uint64_t, std::size_t> &block) {
        const auto found = live.find(block.first);
        return found != live.end() && found->second == block.second;
    };
    PassLayer *forward = nullptr, *backward = nullptr;
    std::vector<std::pair<std::uint64_t, std::size_t>> recent; // allocated since a forward ended or a backward began
    std::uint32_t backwardOf = kNoChainLayer;
    std::size_t runningPass = SIZE_MAX, forwardDone = 0, backwardDone = 0, next = 0;
    const auto cross = [&](const Boundary &b, std::size_t event) {
        PassLayer &layer = measured[b.pass][b.layer];
        switch (b.edge) {
        case Edge::ForwardBegin:
            forward = &layer;
            layer.firstEvent = event;
            if (b.layer == 0) {
                runningPass = b.pass;
                forwardDone = backwardDone = 0;
            }
            break;
        case Edge::ForwardEnd: {
            forward = nullptr;
            std::erase_if(layer.blocks, [&](const auto &block) { return !stillLive(block); });
            for (const auto &[addr, index] : layer.blocks)
                layer.retained += events.deltaBytes(index);
            layer.outputEvent = outputEvent(events, layer.blocks);
            layer.output = layer.outputEvent == SIZE_MAX ? 0 : events.deltaBytes(layer.outputEvent);
            layer.kept = layer.retained;
            if (b.layer > 0) {
                PassLayer &before = measured[b.pass][b.layer - 1];
                before.kept = 0;
                for (const auto &block : before.blocks)
                    before.kept += stillLive(block) ? events.deltaBytes(block.second) : 0;
            }
            forwardDone += b.pass == runningPass;
            recent.clear();
            break;
        }
        case Edge::BackwardBegin: {
            std::int64_t alive = 0;
            for (const auto &block : layer.blocks) {
                if (stillLive(block)) {
                    alive += events.deltaBytes(block.second);
                    layer.outputLive = layer.outputLive || block.second == layer.outputEvent;
                }
            }
            layer.aliveAtBackward = alive;
            layer.saving = alive - (layer.outputLive ? layer.output : 0);
            layer.regenerated = layer.retained - alive;
            layer.otherRegenerated = layer.regenerated - (layer.outputLive ? 0 : layer.output);
            // The gradient arriving for its output: the newest live block of the output's
            // size that the backward so far (the next layer's, or the head's) allocated.
            for (auto it = recent.rbegin(); it != recent.rend(); ++it) {
                if (events.deltaBytes(it->second) == layer.output && stillLive(*it)) {
                    layer.gradientEvent = it->second;
                    layer.gradientLive = true;
                    break;
                }
            }
            recent.clear();
            // A checkpoint's backward holds the recomputed output and that gradient until it
            // returns, where the measured backward frees both early on.
            layer.updateHeld();
            layer.mostHeld = layer.held;
            layer.level = bytes;
            layer.backwardBegin = b.timeNs;
            layer.backwardPeak = bytes + layer.held;
            layer.backwardPeakTime = b.timeNs;
            layer.blocks.clear();
            layer.blocks.shrink_to_fit();
            backward = &layer;
            backwardOf = static_cast<std::uint32_t>(b.layer);
            backwardDone += b.pass == runningPass;
            break;
        }
        case Edge::BackwardEnd:
            if (backward == &layer) {
                backward = nullptr;
                backwardOf = kNoChainLayer;
            }
            break;
        }
    };
    for (std::size_t i = first; i < events.size() && events.timeNs(i) < stepEnd + (end == INT64_MAX ? 1 : 0); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != device)
            continue;
        const std::int64_t t = events.timeNs(i);
        while (next < boundaries.size() && boundaries[next].timeNs <= t)
            cross(boundaries[next++], i);
        const std::int64_t delta = events.deltaBytes(i);
        if (delta > 0) {
            live.insert_or_assign(events.addr(i), i);
            recent.emplace_back(events.addr(i), i);
            if (forward) {
                forward->blocks.emplace_back(events.addr(i), i);
                forward->ownBytes += delta;
                forward->forwardRise = std::max(forward->forwardRise, forward->ownBytes);
            }
        } else if (auto found = live.find(events.addr(i)); found != live.end()) {
            if (forward && found->second >= forward->firstEvent)
                forward->ownBytes += delta;
            if (backward && (found->second == backward->outputEvent || found->second == backward->gradientEvent)) {
                (found->second == backward->outputEvent ? backward->outputLive : backward->gradientLive) = false;
                backward->updateHeld();
                backward->mostHeld = std::max(backward->mostHeld, backward->held);
            }
            live.erase(found);
        }
        bytes += delta;
        if (backward && bytes + backward->held > backward->backwardPeak) {
            backward->backwardPeak = bytes + backward->held;
            backward->backwardPeakTime = t;
        }
        const auto segment = static_cast<std::uint32_t>(runningPass == SIZE_MAX ? 0 : forwardDone - std::min(forwardDone, backwardDone));
        const CurvePoint point{t, bytes, segment, backwardDone > 0, events.phase(i), backwardOf, backward ? backward->held : 0};
        if (model.curve.back().timeNs == t)
            model.curve.back() = point;
        else
            model.curve.push_back(point);
    }
    while (next < boundaries.size())
        cross(boundaries[next++], events.size());

    // Per layer, the passes combined so that no prediction rests on the most favourable one.
    model.layers.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
        ChainLayer &layer = model.layers[k];
        layer.layer = passes.front()[k].layer;
        layer.path = trace.layers[layer.layer].path;
        layer.savingBytes = layer.keptBytes = INT64_MAX;
        layer.levelBeforeRecomputeBytes = INT64_MIN;
        layer.recomputePeakBytes = layer.backwardPeakBytes = INT64_MIN;
        for (std::size_t m = 0; m < passes.size(); ++m) {
            const PassLayer &p = measured[m][k];
            const Spans &s = passes[m][k];
            layer.retainedBytes = std::max(layer.retainedBytes, p.retained);
            layer.outputBytes = std::max(layer.outputBytes, p.output);
            layer.savingBytes = std::min(layer.savingBytes, p.saving);
            layer.regeneratedBytes = std::max(layer.regeneratedBytes, p.regenerated);
            layer.forwardRiseBytes = std::max(layer.forwardRiseBytes, p.forwardRise);
            layer.levelAtBackwardBytes = std::max(layer.levelAtBackwardBytes, p.level);
            layer.keptBytes = std::min(layer.keptBytes, p.kept);
            layer.levelBeforeRecomputeBytes = std::max(layer.levelBeforeRecomputeBytes, p.level - p.aliveAtBackward);
            // A recompute starts from the level without any of its blocks (the next layer
            // has released the output by then) and climbs by the forward's rise.
            const std::int64_t recompute = p.level - p.aliveAtBackward + p.forwardRise;
            if (recompute > layer.recomputePeakBytes) {
                layer.recomputePeakBytes = recompute;
                layer.recomputePeakTimeNs = p.backwardBegin;
            }
            layer.heldInBackwardBytes = std::max(layer.heldInBackwardBytes, p.mostHeld);
            if (p.backwardPeak > layer.backwardPeakBytes) {
                layer.backwardPeakBytes = p.backwardPeak;
                layer.backwardPeakTimeNs = p.backwardPeakTime;
            }
            layer.forwardNs += s.forwardEnd - s.forwardBegin;
            layer.backwardNs += s.backwardEnd - s.backwardBegin;
            layer.backwardBeginsNs.push_back(s.backwardBegin);
        }
    }

    model.forwardPeakBytes.assign(n + 1, INT64_MIN);
    model.gapPeakBytes.assign(n + 1, INT64_MIN);
    model.forwardPeakPoint.assign(n + 1, 0);
    model.gapPeakPoint.assign(n + 1, 0);
    for (std::size_t p = 0; p < model.curve.size(); ++p) {
        const CurvePoint &point = model.curve[p];
        if (point.backwardOf != kNoChainLayer) {
            ChainLayer &layer = model.layers[point.backwardOf];
            if (point.bytes > layer.backwardLevelPeakBytes) {
                layer.backwardLevelPeakBytes = point.bytes;
                layer.backwardLevelPeakTimeNs = point.timeNs;
            }
        } else {
            auto &peaks = point.backwardSide ? model.gapPeakBytes : model.forwardPeakBytes;
            if (point.bytes > peaks[point.segment]) {
                peaks[point.segment] = point.bytes;
                (point.backwardSide ? model.gapPeakPoint : model.forwardPeakPoint)[point.segment] = p;
            }
        }
        model.measuredPeakBytes = std::max(model.measuredPeakBytes, point.bytes);
    }
    measureParts(trace, lanes, device, begin, end == INT64_MAX ? stepEnd + 1 : stepEnd, model.step, passes, model);
    cutForwardAtParts(model);
    useMedianTimes(trace, model);
    flagTimeOutliers(model);
    useMeasuredCheckpointCosts(trace, model);
    return model;
}

} // namespace peaklens
