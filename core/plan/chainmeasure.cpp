#include "chainmeasure.h"

#include <algorithm>
#include <bit>
#include <tuple>

namespace peaklens {

std::unordered_map<std::uint32_t, LayerRanges> rangesIn(const Trace &trace, const std::vector<std::uint32_t> &layers,
                                                        std::int64_t begin, std::int64_t end,
                                                        std::optional<std::int64_t> step)
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

std::size_t outputEvent(const MemoryEvents &events, const std::vector<std::pair<std::uint64_t, std::size_t>> &blocks)
{
    constexpr std::int64_t kOutputShareOfLargest = 64;
    std::int64_t largest = 0;
    for (const auto &[addr, index] : blocks)
        largest = std::max(largest, events.deltaBytes(index));
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
        if (events.deltaBytes(it->second) * kOutputShareOfLargest >= largest)
            return it->second;
    }
    return SIZE_MAX;
}

namespace {

constexpr std::size_t kMostParts = 64;
// How far back, in events, a part looks for its input and for the gradient of its output.
constexpr std::size_t kGradientSearchEvents = 1 << 16;

std::uint64_t bit(std::size_t part)
{
    return std::uint64_t(1) << part;
}

// Per chain layer, its descendants in the trace's layer tree.
std::vector<std::vector<std::uint32_t>> descendantsOf(const Trace &trace, const CostModel &model)
{
    std::unordered_map<std::uint32_t, std::size_t> chainIndex;
    for (std::size_t k = 0; k < model.layers.size(); ++k)
        chainIndex[model.layers[k].layer] = k;
    std::vector<std::vector<std::uint32_t>> descendants(model.layers.size());
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

// One part in one pass, as the walk measures it.
struct PartPass
{
    std::size_t layer = 0, part = 0, pass = 0;
    std::size_t firstEvent = 0, forwardEndEvent = 0;
    std::vector<std::pair<std::uint64_t, std::size_t>> blocks; // allocated in its forward
    std::int64_t own = 0, rise = 0, retained = 0, output = 0, saving = 0, otherRegenerated = 0, held = 0, mostHeld = 0;
    std::size_t outputEvent = SIZE_MAX, gradientEvent = SIZE_MAX, inputEvent = SIZE_MAX;
    bool outputLive = false, gradientLive = false;
    // Its input when the measured step has freed it by the part's backward: a checkpoint
    // keeps it until its backward returns.
    std::int64_t inputKept = 0;
    void updateHeld() { held = otherRegenerated + (outputLive ? 0 : output) + (gradientLive ? 0 : output) + inputKept; }
};

// At equal times: ends before begins, a layer's backward opened before its parts' and
// closed after them.
enum class Edge { ForwardEnd, BackwardEnd, LayerBackwardEnd, ForwardBegin, LayerBackwardBegin, BackwardBegin };

struct Boundary
{
    std::int64_t timeNs;
    Edge edge;
    std::size_t index; // into the PartPass list, or for a layer's backward: pass * layers + layer
    auto key() const { return std::tuple(timeNs, edge); }
};

} // namespace

void measureParts(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin, std::int64_t end,
                  std::optional<std::int64_t> step, const std::vector<std::vector<ChainSpans>> &passes, CostModel &model)
{
    const std::size_t n = model.layers.size(), passCount = passes.size();
    if (n == 0 || passCount == 0)
        return;
    const auto descendants = descendantsOf(trace, model);
    std::vector<std::uint32_t> all;
    for (const auto &list : descendants)
        all.insert(all.end(), list.begin(), list.end());
    if (all.empty())
        return;
    const auto ranges = rangesIn(trace, all, begin, end, step);

    // The parts: running forward and backward once per pass, inside the layer's spans.
    std::vector<PartPass> partPasses;
    std::vector<Boundary> boundaries;
    for (std::size_t k = 0; k < n; ++k) {
        std::vector<std::pair<std::int64_t, std::uint32_t>> found; // (first forward, layer)
        for (std::uint32_t l : descendants[k]) {
            const LayerRanges &r = ranges.at(l);
            if (r.forward.size() != passCount || r.backward.size() != passCount)
                continue;
            bool inside = true;
            for (std::size_t m = 0; m < passCount && inside; ++m) {
                const ChainSpans &s = passes[m][k];
                inside = s.forwardBegin <= r.forward[m].first && r.forward[m].second <= s.forwardEnd
                         && s.backwardBegin <= r.backward[m].first && r.backward[m].second <= s.backwardEnd;
            }
            if (inside)
                found.emplace_back(r.forward.front().first, l);
        }
        std::sort(found.begin(), found.end());
        if (found.size() > kMostParts)
            found.resize(kMostParts);
        ChainLayer &layer = model.layers[k];
        for (std::size_t c = 0; c < found.size(); ++c) {
            const std::uint32_t l = found[c].second;
            ChainPart part;
            part.layer = l;
            part.path = trace.layers[l].path;
            part.savingBytes = INT64_MAX;
            const LayerRanges &r = ranges.at(l);
            for (std::size_t m = 0; m < passCount; ++m) {
                part.forwardNs += r.forward[m].second - r.forward[m].first;
                part.backwardBeginsNs.push_back(r.backward[m].first);
                part.backwardEndsNs.push_back(r.backward[m].second);
                part.forwardEndsNs.push_back(r.forward[m].second);
                const std::size_t index = partPasses.size();
                partPasses.push_back({k, c, m});
                boundaries.push_back({r.forward[m].first, Edge::ForwardBegin, index});
                boundaries.push_back({r.forward[m].second, Edge::ForwardEnd, index});
                boundaries.push_back({r.backward[m].first, Edge::BackwardBegin, index});
                boundaries.push_back({r.backward[m].second, Edge::BackwardEnd, index});
            }
            part.recomputeNs = part.forwardNs;
            layer.parts.push_back(std::move(part));
        }
        if (!found.empty()) {
            for (std::size_t m = 0; m < passCount; ++m) {
                boundaries.push_back({passes[m][k].backwardBegin, Edge::LayerBackwardBegin, m * n + k});
                boundaries.push_back({passes[m][k].backwardEnd, Edge::LayerBackwardEnd, m * n + k});
            }
        }
    }
    if (partPasses.empty())
        return;
    std::stable_sort(boundaries.begin(), boundaries.end(), [](const Boundary &a, const Boundary &b) { return a.key() < b.key(); });

    const MemoryEvents &events = trace.events;
    std::unordered_map<std::uint64_t, std::size_t> live; // address -> allocating event
    const auto stillLive = [&](const std::pair<std::uint64_t, std::size_t> &block) {
        const auto found = live.find(block.first);
        return found != live.end() && found->second == block.second;
    };
    // The input a forward beginning at `event` reads: of the three newest blocks live then
    // (a normalization's output comes before its two statistics), the newest at least
    // half the largest.
    const auto inputOf = [&](std::size_t event) {
        constexpr std::size_t kCandidates = 3;
        std::vector<std::size_t> newest;
        const std::size_t floor = event > kGradientSearchEvents ? event - kGradientSearchEvents : 0;
        for (std::size_t j = event; j-- > floor && newest.size() < kCandidates;) {
            if (lanes.deviceOfLane[events.lane(j)] == device && events.deltaBytes(j) > 0 && stillLive({events.addr(j), j}))
                newest.push_back(j);
        }
        std::int64_t largest = 0;
        for (std::size_t j : newest)
            largest = std::max(largest, events.deltaBytes(j));
        for (std::size_t j : newest) {
            if (2 * events.deltaBytes(j) >= largest)
                return j;
        }
        return SIZE_MAX;
    };
    std::int64_t bytes = 0;
    std::vector<PartPass *> forwards, backwards;
    ChainLayer *inBackward = nullptr; // the chain layer whose backward is cut into pieces now
    std::size_t backwardLayer = 0, backwardPass = 0;
    std::uint64_t pending = 0, within = 0;
    const auto partPassOf = [&](std::size_t part) -> PartPass * {
        for (PartPass *p : backwards) {
            if (p->part == part && p->layer == backwardLayer && p->pass == backwardPass)
                return p;
        }
        return nullptr;
    };
    const auto openPiece = [&](std::int64_t t) {
        BackwardPiece piece{pending, within, bytes, t, {}, SIZE_MAX};
        for (std::uint64_t w = within; w; w &= w - 1) {
            const auto part = static_cast<std::size_t>(std::countr_zero(w));
            const PartPass *p = partPassOf(part);
            piece.heldPeakBytes.emplace_back(part, bytes + (p ? p->held : 0));
        }
        inBackward->backwardPieces.push_back(std::move(piece));
    };
    const auto cross = [&](const Boundary &b, std::size_t event) {
        if (b.edge == Edge::LayerBackwardBegin || b.edge == Edge::LayerBackwardEnd) {
            const std::size_t k = b.index % n;
            if (b.edge == Edge::LayerBackwardBegin) {
                inBackward = &model.layers[k];
                backwardLayer = k;
                backwardPass = b.index / n;
                pending = inBackward->parts.size() == 64 ? ~std::uint64_t(0) : bit(inBackward->parts.size()) - 1;
                within = 0;
                openPiece(b.timeNs);
            } else if (inBackward == &model.layers[k]) {
                inBackward = nullptr;
            }
            return;
        }
        PartPass &p = partPasses[b.index];
        switch (b.edge) {
        case Edge::ForwardBegin:
            p.firstEvent = event;
            p.inputEvent = inputOf(event);
            forwards.push_back(&p);
            break;
        case Edge::ForwardEnd:
            std::erase(forwards, &p);
            std::erase_if(p.blocks, [&](const auto &block) { return !stillLive(block); });
            for (const auto &[addr, index] : p.blocks)
                p.retained += events.deltaBytes(index);
            p.outputEvent = outputEvent(events, p.blocks);
            p.output = p.outputEvent == SIZE_MAX ? 0 : events.deltaBytes(p.outputEvent);
            p.forwardEndEvent = event;
            break;
        case Edge::BackwardBegin: {
            std::int64_t alive = 0;
            for (const auto &block : p.blocks) {
                if (stillLive(block)) {
                    alive += events.deltaBytes(block.second);
                    p.outputLive = p.outputLive || block.second == p.outputEvent;
                }
            }
            if (p.inputEvent != SIZE_MAX && !stillLive({events.addr(p.inputEvent), p.inputEvent}))
                p.inputKept = events.deltaBytes(p.inputEvent);
            p.saving = alive - (p.outputLive ? p.output : 0) - p.inputKept;
            p.otherRegenerated = p.retained - alive - (p.outputLive ? 0 : p.output);
            // The gradient arriving for its output: the newest live block of the output's
            // size allocated since its forward ended.
            const std::size_t floor = std::max(p.forwardEndEvent, event > kGradientSearchEvents ? event - kGradientSearchEvents : 0);
            for (std::size_t j = event; j-- > floor && p.output > 0;) {
                if (lanes.deviceOfLane[events.lane(j)] == device && events.deltaBytes(j) == p.output
                    && stillLive({events.addr(j), j}) && j != p.outputEvent) {
                    p.gradientEvent = j;
                    p.gradientLive = true;
                    break;
                }
            }
            p.updateHeld();
            p.mostHeld = p.held;
            p.blocks.clear();
            p.blocks.shrink_to_fit();
            backwards.push_back(&p);
            if (inBackward && backwardLayer == p.layer && backwardPass == p.pass) {
                pending &= ~bit(p.part);
                BackwardPiece spike{pending, bit(p.part), INT64_MIN, b.timeNs, {{p.part, bytes - alive + p.rise + p.inputKept}}, p.part};
                inBackward->backwardPieces.push_back(std::move(spike));
                within |= bit(p.part);
                openPiece(b.timeNs);
            }
            break;
        }
        case Edge::BackwardEnd:
            std::erase(backwards, &p);
            if (inBackward && backwardLayer == p.layer && backwardPass == p.pass) {
                within &= ~bit(p.part);
                openPiece(b.timeNs);
            }
            break;
        default:
            break;
        }
    };

    std::size_t next = 0;
    for (std::size_t i = 0; i < events.size() && events.timeNs(i) < end; ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != device)
            continue;
        const std::int64_t t = events.timeNs(i);
        const std::int64_t delta = events.deltaBytes(i);
        if (t < begin) {
            bytes += delta;
            continue;
        }
        while (next < boundaries.size() && boundaries[next].timeNs <= t)
            cross(boundaries[next++], i);
        if (delta > 0) {
            live.insert_or_assign(events.addr(i), i);
            for (PartPass *p : forwards) {
                p->blocks.emplace_back(events.addr(i), i);
                p->own += delta;
                p->rise = std::max(p->rise, p->own);
            }
        } else if (auto found = live.find(events.addr(i)); found != live.end()) {
            for (PartPass *p : forwards) {
                if (found->second >= p->firstEvent)
                    p->own += delta;
            }
            for (PartPass *p : backwards) {
                if (found->second == p->outputEvent || found->second == p->gradientEvent) {
                    (found->second == p->outputEvent ? p->outputLive : p->gradientLive) = false;
                    p->updateHeld();
                    p->mostHeld = std::max(p->mostHeld, p->held);
                }
            }
            live.erase(found);
        }
        bytes += delta;
        if (inBackward) {
            BackwardPiece &piece = inBackward->backwardPieces.back();
            if (bytes > piece.levelPeakBytes) {
                piece.levelPeakBytes = bytes;
                piece.levelPeakTimeNs = t;
            }
            for (auto &[part, most] : piece.heldPeakBytes) {
                const PartPass *p = partPassOf(part);
                most = std::max(most, bytes + (p ? p->held : 0));
            }
        }
    }
    while (next < boundaries.size())
        cross(boundaries[next++], events.size());

    // Passes combined as for the layers: the least saving, the most held.
    for (const PartPass &p : partPasses) {
        ChainPart &part = model.layers[p.layer].parts[p.part];
        part.savingBytes = std::min(part.savingBytes, p.saving);
        part.heldInBackwardBytes = std::max(part.heldInBackwardBytes, p.mostHeld);
    }
}

} // namespace peaklens
