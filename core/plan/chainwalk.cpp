// SPDX-License-Identifier: Apache-2.0
#include "chainwalk.h"

#include "core/analysis/lanedevices.h"

#include <algorithm>
#include <bit>
#include <tuple>
#include <unordered_map>

namespace peaklens {

namespace {

constexpr std::size_t kWholeLayer = SIZE_MAX;
// How far back, in events, a part looks for its input.
constexpr std::size_t kInputSearchEvents = 1 << 16;

using Block = std::pair<std::uint64_t, std::size_t>; // (address, allocating event)

std::uint64_t bit(std::size_t part)
{
    return std::uint64_t(1) << part;
}

// Of the blocks (address, allocating event) a forward kept, in allocation order: the
// event of its output, the newest not smaller than 1/64 of the largest (BatchNorm's and
// LayerNorm's saved statistics are allocated after it). SIZE_MAX when there are none.
std::size_t outputEvent(const MemoryEvents &events, const std::vector<Block> &blocks)
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

// One unit in one pass while the walk runs. Chain layers and parts are measured alike;
// they differ in two things only. A part's input is looked for as its forward begins: a
// checkpoint keeps it until the part's backward returns, and the model has no unit before
// the part to count it (a chain layer's input is the previous layer's output, counted
// there). And a chain layer's `kept` is measured as the next chain layer's forward ends.
struct UnitPass
{
    std::size_t layer = 0, part = kWholeLayer, pass = 0;
    std::size_t firstEvent = 0;
    std::size_t firstPoint = 0; // its forward's first point on the curve
    std::vector<Block> blocks;  // allocated in its forward (those still live, once it ended)
    std::int64_t own = 0;       // its forward's own blocks live now
    std::size_t outputEvent = SIZE_MAX, gradientEvent = SIZE_MAX, inputEvent = SIZE_MAX;
    bool gradientLive = false;
    // Checkpointed, what its backward holds beyond the measured one now: the regenerated
    // blocks but the output, the recomputed output and its gradient where the measured
    // step has freed them, and its input where the measured step had freed that.
    std::int64_t inputKept = 0, otherRegenerated = 0, held = 0;
    UnitMeasure measure;

    bool isPart() const { return part != kWholeLayer; }
    void updateHeld()
    {
        held = otherRegenerated + (measure.outputLive ? 0 : measure.output) + (gradientLive ? 0 : measure.output) + inputKept;
        measure.mostHeld = std::max(measure.mostHeld, held);
    }
};

// At equal times: ends before begins; a chain layer's backward opens before its parts'
// and closes after them. A span of no length opens before anything closes, so that it
// holds nothing rather than everything after it.
enum class Order {
    EmptyBegin,
    ForwardEnd,
    PartBackwardEnd,
    LayerBackwardEnd,
    ForwardBegin,
    LayerBackwardBegin,
    PartBackwardBegin
};
enum class Crossing { ForwardBegin, ForwardEnd, BackwardBegin, BackwardEnd };

struct Boundary
{
    std::int64_t timeNs;
    Order order;
    std::size_t unit;
    Crossing crossing;
    auto key() const { return std::tuple(timeNs, order); }
};

class Walk
{
public:
    Walk(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, const ChainUnits &units, CostModel &model);
    void run(std::int64_t begin, std::int64_t end);
    ChainMeasures measures() const;

private:
    void addUnit(const UnitSpans &spans, std::size_t layer, std::size_t part, std::size_t pass);
    void cross(const Boundary &boundary, std::size_t event);
    void forwardBegins(UnitPass &unit, std::int64_t timeNs, std::size_t event);
    void forwardEnds(UnitPass &unit, std::int64_t timeNs, std::size_t event);
    void backwardBegins(UnitPass &unit, std::int64_t timeNs, std::size_t event);
    void backwardEnds(UnitPass &unit, std::int64_t timeNs);
    void take(std::size_t event);
    bool onDevice(std::size_t event) const { return m_lanes.deviceOfLane[m_events.lane(event)] == m_device; }
    bool stillLive(const Block &block) const;
    std::size_t inputOf(std::size_t event) const;
    std::size_t gradientOf(const UnitPass &unit, std::int64_t timeNs, std::size_t event) const;
    void moveSearchFloor(const UnitPass &unit, std::int64_t timeNs, std::size_t event);
    void openPiece(std::int64_t timeNs);
    const UnitPass &partInBackward(std::size_t part) const;
    void noteMoved(const UnitPass &unit);
    void releaseMoved();
    void noteMovedInForward(const UnitPass &unit, std::size_t endEvent);

    const MemoryEvents &m_events;
    const LaneDevices &m_lanes;
    const std::uint32_t m_device;
    CostModel &m_model;
    std::vector<UnitPass> m_units;
    std::vector<std::vector<std::size_t>> m_layerUnits;             // [pass][chain layer]
    std::vector<std::vector<std::vector<std::size_t>>> m_partUnits; // [chain layer][part][pass]
    std::vector<Boundary> m_boundaries;

    std::unordered_map<std::uint64_t, std::size_t> m_live; // address -> allocating event
    std::int64_t m_bytes = 0;
    std::vector<UnitPass *> m_forwards, m_backwards;
    // A unit's output's gradient is allocated by the backward that ran before its own:
    // it is looked for since the last forward end or backward begin of a unit of its
    // kind, at an earlier time (at equal times, the one before).
    struct SearchFloor
    {
        std::int64_t timeNs = INT64_MIN;
        std::size_t event = 0, before = 0;
    };
    SearchFloor m_layerFloor, m_partFloor;
    // The curve: the pass running, its chain layers' forwards ended and backwards begun,
    // and the chain layer whose backward runs.
    std::size_t m_runningPass = SIZE_MAX, m_forwardsDone = 0, m_backwardsDone = 0;
    UnitPass *m_layerBackward = nullptr;
    // The chain layer whose backward is cut into pieces now, with its parts' state.
    UnitPass *m_cutBackward = nullptr;
    std::uint64_t m_pending = 0, m_within = 0;
    // In the running chain layer's backward: the allocating events of what its forward left
    // for it (sorted), the bytes of them still live and released since the curve point
    // m_movedFrom (CurvePoint::movedLiveBytes, movedNextBytes).
    std::vector<std::size_t> m_moved;
    std::int64_t m_movedLive = 0, m_movedNext = 0;
    std::size_t m_movedFrom = 0;
};

Walk::Walk(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, const ChainUnits &units, CostModel &model)
    : m_events(trace.events)
    , m_lanes(lanes)
    , m_device(device)
    , m_model(model)
{
    const std::size_t n = units.passes.front().size();
    m_layerUnits.assign(units.passes.size(), std::vector<std::size_t>(n));
    m_partUnits.resize(n);
    for (std::size_t m = 0; m < units.passes.size(); ++m) {
        for (std::size_t k = 0; k < n; ++k) {
            m_layerUnits[m][k] = m_units.size();
            addUnit(units.passes[m][k], k, kWholeLayer, m);
        }
    }
    for (std::size_t k = 0; k < n; ++k) {
        for (std::size_t c = 0; c < units.parts[k].size(); ++c) {
            m_partUnits[k].emplace_back();
            for (std::size_t m = 0; m < units.parts[k][c].size(); ++m) {
                m_partUnits[k][c].push_back(m_units.size());
                addUnit(units.parts[k][c][m], k, c, m);
            }
        }
    }
    std::stable_sort(m_boundaries.begin(), m_boundaries.end(),
                     [](const Boundary &a, const Boundary &b) { return a.key() < b.key(); });
}

void Walk::addUnit(const UnitSpans &spans, std::size_t layer, std::size_t part, std::size_t pass)
{
    const std::size_t index = m_units.size();
    m_units.push_back({layer, part, pass});
    const bool isPart = part != kWholeLayer;
    const auto add = [&](Interval span, Order begins, Order ends, bool forward) {
        m_boundaries.push_back({span.first, span.first == span.second ? Order::EmptyBegin : begins, index,
                                forward ? Crossing::ForwardBegin : Crossing::BackwardBegin});
        m_boundaries.push_back({span.second, ends, index, forward ? Crossing::ForwardEnd : Crossing::BackwardEnd});
    };
    add({spans.forwardBegin, spans.forwardEnd}, Order::ForwardBegin, Order::ForwardEnd, true);
    add({spans.backwardBegin, spans.backwardEnd}, isPart ? Order::PartBackwardBegin : Order::LayerBackwardBegin,
        isPart ? Order::PartBackwardEnd : Order::LayerBackwardEnd, false);
}

bool Walk::stillLive(const Block &block) const
{
    const auto found = m_live.find(block.first);
    return found != m_live.end() && found->second == block.second;
}

// The input a forward beginning at `event` reads: of the three newest blocks live then (a
// normalization's output comes before its two statistics), the newest at least half the
// largest.
std::size_t Walk::inputOf(std::size_t event) const
{
    constexpr std::size_t kCandidates = 3;
    std::vector<std::size_t> newest;
    const std::size_t floor = event > kInputSearchEvents ? event - kInputSearchEvents : 0;
    for (std::size_t j = event; j-- > floor && newest.size() < kCandidates;) {
        if (onDevice(j) && m_events.deltaBytes(j) > 0 && stillLive({m_events.addr(j), j}))
            newest.push_back(j);
    }
    std::int64_t largest = 0;
    for (std::size_t j : newest)
        largest = std::max(largest, m_events.deltaBytes(j));
    for (std::size_t j : newest) {
        if (2 * m_events.deltaBytes(j) >= largest)
            return j;
    }
    return SIZE_MAX;
}

// The gradient arriving for a unit's output as its backward begins at `event`: the newest
// live block of the output's size allocated since its kind's search floor.
std::size_t Walk::gradientOf(const UnitPass &unit, std::int64_t timeNs, std::size_t event) const
{
    const SearchFloor &floor = unit.isPart() ? m_partFloor : m_layerFloor;
    const std::size_t from = timeNs == floor.timeNs ? floor.before : floor.event;
    for (std::size_t j = event; j-- > from && unit.measure.output > 0;) {
        if (onDevice(j) && m_events.deltaBytes(j) == unit.measure.output && stillLive({m_events.addr(j), j}))
            return j;
    }
    return SIZE_MAX;
}

void Walk::moveSearchFloor(const UnitPass &unit, std::int64_t timeNs, std::size_t event)
{
    SearchFloor &floor = unit.isPart() ? m_partFloor : m_layerFloor;
    if (timeNs != floor.timeNs)
        floor.before = floor.event;
    floor.timeNs = timeNs;
    floor.event = event;
}

void Walk::forwardBegins(UnitPass &unit, std::int64_t timeNs, std::size_t event)
{
    unit.firstEvent = event;
    unit.firstPoint = m_model.curve.size();
    unit.measure.forwardBeginEvent = event;
    unit.measure.forwardBeginNs = timeNs;
    if (unit.isPart())
        unit.inputEvent = inputOf(event);
    m_forwards.push_back(&unit);
    if (!unit.isPart() && unit.layer == 0) {
        m_runningPass = unit.pass;
        m_forwardsDone = m_backwardsDone = 0;
    }
}

void Walk::forwardEnds(UnitPass &unit, std::int64_t timeNs, std::size_t event)
{
    UnitMeasure &measure = unit.measure;
    std::erase(m_forwards, &unit);
    std::erase_if(unit.blocks, [&](const Block &block) { return !stillLive(block); });
    for (const auto &[addr, index] : unit.blocks)
        measure.retained += m_events.deltaBytes(index);
    unit.outputEvent = outputEvent(m_events, unit.blocks);
    measure.forwardEndEvent = event;
    measure.forwardEndNs = timeNs;
    measure.forwardOutputEvent = unit.outputEvent;
    measure.output = unit.outputEvent == SIZE_MAX ? 0 : m_events.deltaBytes(unit.outputEvent);
    measure.kept = measure.retained;
    if (!unit.isPart()) {
        if (unit.layer > 0) {
            UnitPass &before = m_units[m_layerUnits[unit.pass][unit.layer - 1]];
            before.measure.kept = 0;
            for (const Block &block : before.blocks)
                before.measure.kept += stillLive(block) ? m_events.deltaBytes(block.second) : 0;
            before.measure.outputKept =
                before.outputEvent != SIZE_MAX && stillLive({m_events.addr(before.outputEvent), before.outputEvent});
        }
        m_forwardsDone += unit.pass == m_runningPass;
        noteMovedInForward(unit, event);
    }
    moveSearchFloor(unit, timeNs, event);
}

void Walk::backwardBegins(UnitPass &unit, std::int64_t timeNs, std::size_t event)
{
    UnitMeasure &measure = unit.measure;
    for (const Block &block : unit.blocks) {
        if (stillLive(block)) {
            measure.alive += m_events.deltaBytes(block.second);
            measure.outputLive = measure.outputLive || block.second == unit.outputEvent;
            measure.keptEvents.push_back(block.second);
        }
    }
    measure.outputEvent = measure.outputLive ? unit.outputEvent : SIZE_MAX;
    if (unit.inputEvent != SIZE_MAX && !stillLive({m_events.addr(unit.inputEvent), unit.inputEvent}))
        unit.inputKept = m_events.deltaBytes(unit.inputEvent);
    measure.saving = measure.alive - (measure.outputLive ? measure.output : 0) - unit.inputKept;
    measure.regenerated = measure.retained - measure.alive;
    unit.otherRegenerated = measure.regenerated - (measure.outputLive ? 0 : measure.output);
    unit.gradientEvent = gradientOf(unit, timeNs, event);
    unit.gradientLive = unit.gradientEvent != SIZE_MAX;
    moveSearchFloor(unit, timeNs, event);
    unit.updateHeld();
    measure.levelAtBackward = m_bytes;
    measure.backwardBeginNs = timeNs;
    measure.backwardPeak = m_bytes + unit.held;
    measure.backwardPeakTimeNs = timeNs;
    unit.blocks.clear();
    unit.blocks.shrink_to_fit();
    m_backwards.push_back(&unit);
    if (!unit.isPart()) {
        noteMoved(unit);
        m_layerBackward = &unit;
        m_backwardsDone += unit.pass == m_runningPass;
        m_cutBackward = m_model.layers[unit.layer].parts.empty() ? nullptr : &unit;
        const std::size_t parts = m_model.layers[unit.layer].parts.size();
        m_pending = parts == ChainUnits::kMostParts ? ~std::uint64_t(0) : bit(parts) - 1;
        m_within = 0;
        if (m_cutBackward)
            openPiece(timeNs);
    } else if (m_cutBackward && m_cutBackward->layer == unit.layer && m_cutBackward->pass == unit.pass) {
        // The top of its recompute: its level as its backward begins, less its blocks
        // alive, plus its forward's rise (and its input, which the checkpoint kept).
        m_pending &= ~bit(unit.part);
        const std::int64_t top = m_bytes - measure.alive + measure.forwardRise + unit.inputKept;
        m_model.layers[unit.layer].backwardPieces.push_back(
            {m_pending, bit(unit.part), INT64_MIN, timeNs, {{unit.part, top}}, unit.part});
        m_within |= bit(unit.part);
        openPiece(timeNs);
    }
}

void Walk::backwardEnds(UnitPass &unit, std::int64_t timeNs)
{
    std::erase(m_backwards, &unit);
    if (!unit.isPart()) {
        if (m_layerBackward == &unit) {
            releaseMoved();
            m_moved.clear();
            m_movedLive = 0;
            m_layerBackward = nullptr;
        }
        if (m_cutBackward == &unit)
            m_cutBackward = nullptr;
    } else if (m_cutBackward && m_cutBackward->layer == unit.layer && m_cutBackward->pass == unit.pass) {
        m_within &= ~bit(unit.part);
        openPiece(timeNs);
    }
}

void Walk::cross(const Boundary &boundary, std::size_t event)
{
    UnitPass &unit = m_units[boundary.unit];
    switch (boundary.crossing) {
    case Crossing::ForwardBegin:
        forwardBegins(unit, boundary.timeNs, event);
        break;
    case Crossing::ForwardEnd:
        forwardEnds(unit, boundary.timeNs, event);
        break;
    case Crossing::BackwardBegin:
        backwardBegins(unit, boundary.timeNs, event);
        break;
    case Crossing::BackwardEnd:
        backwardEnds(unit, boundary.timeNs);
        break;
    }
}

// What a chain layer's backward beginning now was left by its forward: its blocks alive
// (measure.keptEvents) but its output, and its input, the layer before's output, if live.
void Walk::noteMoved(const UnitPass &unit)
{
    releaseMoved();
    m_moved.clear();
    for (const std::size_t event : unit.measure.keptEvents) {
        if (event != unit.measure.outputEvent)
            m_moved.push_back(event);
    }
    if (unit.layer > 0) {
        const UnitPass &before = m_units[m_layerUnits[unit.pass][unit.layer - 1]];
        if (before.outputEvent != SIZE_MAX && stillLive({m_events.addr(before.outputEvent), before.outputEvent}))
            m_moved.push_back(before.outputEvent);
    }
    std::sort(m_moved.begin(), m_moved.end());
    m_movedLive = 0;
    for (const std::size_t event : m_moved)
        m_movedLive += m_events.deltaBytes(event);
    m_movedFrom = m_model.curve.size();
}

// A chain layer's forward, ended at `endEvent`, run plainly keeping elsewhere what it leaves
// for its backward (its blocks still live but its output): at each of its points, what of
// that it has made, and what of it the operator running uses (the newest such block, and
// where that is being made now, the one before it, which the operator reads).
void Walk::noteMovedInForward(const UnitPass &unit, std::size_t endEvent)
{
    std::vector<std::size_t> moved;
    for (const Block &block : unit.blocks) {
        if (block.second != unit.outputEvent)
            moved.push_back(block.second);
    }
    std::int64_t made = 0, newest = 0, before = 0;
    std::size_t p = unit.firstPoint;
    for (std::size_t j = unit.firstEvent; j < endEvent && p < m_model.curve.size(); ++j) {
        if (!onDevice(j))
            continue;
        const bool kept = m_events.deltaBytes(j) > 0 && std::binary_search(moved.begin(), moved.end(), j);
        if (kept) {
            made += m_events.deltaBytes(j);
            before = newest;
            newest = m_events.deltaBytes(j);
        }
        while (p + 1 < m_model.curve.size() && m_model.curve[p].timeNs < m_events.timeNs(j))
            ++p;
        m_model.curve[p].movedLiveBytes = made;
        m_model.curve[p].movedNextBytes = newest + (kept ? before : 0);
    }
}

// The points since the last release of what a layer's forward left used what this one
// frees: an autograd node releases what it saved once it has run.
void Walk::releaseMoved()
{
    for (std::size_t p = m_movedFrom; p < m_model.curve.size() && m_movedNext > 0; ++p)
        m_model.curve[p].movedNextBytes = m_movedNext;
    m_movedNext = 0;
    m_movedFrom = m_model.curve.size();
}

const UnitPass &Walk::partInBackward(std::size_t part) const
{
    return m_units[m_partUnits[m_cutBackward->layer][part][m_cutBackward->pass]];
}

// A new stretch of the cut backward: which parts are pending and which run, and per
// running part the level plus what its checkpoint holds.
void Walk::openPiece(std::int64_t timeNs)
{
    BackwardPiece piece{m_pending, m_within, m_bytes, timeNs, {}, SIZE_MAX};
    for (std::uint64_t w = m_within; w; w &= w - 1) {
        const auto part = static_cast<std::size_t>(std::countr_zero(w));
        piece.heldPeakBytes.emplace_back(part, m_bytes + partInBackward(part).held);
    }
    m_model.layers[m_cutBackward->layer].backwardPieces.push_back(std::move(piece));
}

void Walk::take(std::size_t i)
{
    const std::int64_t t = m_events.timeNs(i);
    const std::int64_t delta = m_events.deltaBytes(i);
    if (delta > 0) {
        if (m_movedNext > 0)
            releaseMoved();
        m_live.insert_or_assign(m_events.addr(i), i);
        for (UnitPass *unit : m_forwards) {
            unit->blocks.emplace_back(m_events.addr(i), i);
            unit->own += delta;
            unit->measure.forwardRise = std::max(unit->measure.forwardRise, unit->own);
        }
    } else if (auto found = m_live.find(m_events.addr(i)); found != m_live.end()) {
        for (UnitPass *unit : m_forwards) {
            if (found->second >= unit->firstEvent)
                unit->own += delta;
        }
        for (UnitPass *unit : m_backwards) {
            if (found->second == unit->outputEvent || found->second == unit->gradientEvent) {
                (found->second == unit->outputEvent ? unit->measure.outputLive : unit->gradientLive) = false;
                unit->updateHeld();
            }
        }
        if (m_layerBackward && std::binary_search(m_moved.begin(), m_moved.end(), found->second)) {
            m_movedLive += delta;
            m_movedNext -= delta;
        }
        m_live.erase(found);
    }
    m_bytes += delta;
    for (UnitPass *unit : m_backwards) {
        if (m_bytes + unit->held > unit->measure.backwardPeak) {
            unit->measure.backwardPeak = m_bytes + unit->held;
            unit->measure.backwardPeakTimeNs = t;
        }
    }
    if (m_cutBackward) {
        BackwardPiece &piece = m_model.layers[m_cutBackward->layer].backwardPieces.back();
        if (m_bytes > piece.levelPeakBytes) {
            piece.levelPeakBytes = m_bytes;
            piece.levelPeakTimeNs = t;
        }
        for (auto &[part, most] : piece.heldPeakBytes)
            most = std::max(most, m_bytes + partInBackward(part).held);
    }
    const auto segment =
        static_cast<std::uint32_t>(m_runningPass == SIZE_MAX ? 0 : m_forwardsDone - std::min(m_forwardsDone, m_backwardsDone));
    const auto backwardOf = m_layerBackward ? static_cast<std::uint32_t>(m_layerBackward->layer) : kNoChainLayer;
    CurvePoint point{
        t, m_bytes, segment, m_backwardsDone > 0, m_events.phase(i), backwardOf, m_layerBackward ? m_layerBackward->held : 0};
    point.movedLiveBytes = m_layerBackward ? m_movedLive : 0;
    if (m_model.curve.back().timeNs == t)
        m_model.curve.back() = point;
    else
        m_model.curve.push_back(point);
}

void Walk::run(std::int64_t begin, std::int64_t end)
{
    std::size_t i = 0;
    for (; i < m_events.size() && m_events.timeNs(i) < begin; ++i) {
        if (onDevice(i))
            m_bytes += m_events.deltaBytes(i);
    }
    m_model.curve.push_back({m_model.stepBeginNs, m_bytes, 0, false, Phase::Other});
    std::size_t next = 0;
    for (; i < m_events.size() && m_events.timeNs(i) < end; ++i) {
        if (!onDevice(i))
            continue;
        while (next < m_boundaries.size() && m_boundaries[next].timeNs <= m_events.timeNs(i))
            cross(m_boundaries[next++], i);
        take(i);
    }
    while (next < m_boundaries.size())
        cross(m_boundaries[next++], m_events.size());
}

ChainMeasures Walk::measures() const
{
    ChainMeasures measures;
    for (const auto &pass : m_layerUnits) {
        measures.layers.emplace_back();
        for (std::size_t index : pass)
            measures.layers.back().push_back(m_units[index].measure);
    }
    for (const auto &layer : m_partUnits) {
        measures.parts.emplace_back();
        for (const auto &part : layer) {
            measures.parts.back().emplace_back();
            for (std::size_t index : part)
                measures.parts.back().back().push_back(m_units[index].measure);
        }
    }
    return measures;
}

} // namespace

ChainMeasures walkChain(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin, std::int64_t end,
                        const ChainUnits &units, CostModel &model)
{
    Walk walk(trace, lanes, device, units, model);
    walk.run(begin, end);
    return walk.measures();
}

} // namespace peaklens
