// SPDX-License-Identifier: Apache-2.0
#include "sharding.h"

#include "core/analysis/lanedevices.h"
#include "core/analysis/peakfinder.h"
#include "core/error.h"
#include "core/trace/metadata.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

namespace peaklens {

namespace {

// Addresses of the blocks the rewrite adds: above any a 64-bit process hands out (user
// space ends below 2^57), one per block.
constexpr std::uint64_t kFirstAddedAddress = std::uint64_t(1) << 62;

bool sharded(Category category, int stage)
{
    return (category == Category::OptimizerState && stage >= 1) || (category == Category::Gradient && stage >= 2)
           || (category == Category::Parameter && stage >= 3);
}

std::int64_t shardOf(std::int64_t bytes, int degree)
{
    return (bytes + degree - 1) / degree;
}

// What happens to a rank's memory at one time beyond the traced events, in order.
struct Added
{
    std::int64_t timeNs = 0;
    std::uint64_t order = 0; // among those at one time: as made
    // A reduce-scatter begins by copying a unit's whole gradients into the collective's
    // input, and ends with each gradient shrunk to its shard and the input freed.
    enum class Kind { Alloc, Free, ScatterBegins, ScatterEnds } kind = Kind::Alloc;
    std::uint64_t addr = 0;
    std::int64_t bytes = 0;
    Category category = Category::Parameter;
    Phase phase = Phase::Other;
    std::size_t group = 0; // a reduce-scatter's gradients (index into the held groups)
};

// The rank's extra events, built step by step.
class Schedule
{
public:
    void alloc(std::int64_t timeNs, std::uint64_t addr, std::int64_t bytes, Category category, Phase phase)
    {
        m_added.push_back({timeNs, m_order++, Added::Kind::Alloc, addr, bytes, category, phase, 0});
    }
    void free(std::int64_t timeNs, std::uint64_t addr, Phase phase)
    {
        m_added.push_back({timeNs, m_order++, Added::Kind::Free, addr, 0, Category::Parameter, phase, 0});
    }
    // A reduce-scatter as a unit's backward ends; its input lives a nanosecond, so that a
    // level taken per time sees it.
    void reduceScatter(std::int64_t timeNs, std::size_t group)
    {
        m_added.push_back({timeNs, m_order++, Added::Kind::ScatterBegins, 0, 0, Category::Gradient, Phase::Backward, group});
        m_added.push_back({timeNs + 1, m_order++, Added::Kind::ScatterEnds, 0, 0, Category::Gradient, Phase::Backward, group});
    }
    std::uint64_t newAddress() { return m_nextAddr++; }

    std::vector<Added> sorted()
    {
        std::sort(m_added.begin(), m_added.end(),
                  [](const Added &a, const Added &b) { return a.timeNs != b.timeNs ? a.timeNs < b.timeNs : a.order < b.order; });
        return std::move(m_added);
    }

private:
    std::vector<Added> m_added;
    std::uint64_t m_order = 0;
    std::uint64_t m_nextAddr = kFirstAddedAddress;
};

// A unit gathered, FSDP2's way: the collective's buffer from `issued`, copied out into the
// unit's parameters at `used` (both live then), the buffer freed a nanosecond later, the
// parameters at `released`. A prefetch is issued as the unit before it is copied out, and
// that unit's buffer is freed before gloo's copy of the new one (two and three
// nanoseconds on): the order seen on most ranks, where a rank that reaches the collective
// late holds one more unit for that instant. Every step is a nanosecond or more apart, so
// that a level taken per time sees each.
// Returns when it was copied out.
std::int64_t gather(Schedule &schedule, const Sharding &sharding, std::int64_t bytes, std::int64_t issued, std::int64_t used,
                    std::int64_t released, Phase phase)
{
    if (bytes <= 0)
        return std::max(issued, used);
    const std::uint64_t buffer = schedule.newAddress();
    schedule.alloc(issued, buffer, bytes, Category::Parameter, phase);
    if (sharding.gatherCopies) {
        const std::uint64_t copy = schedule.newAddress();
        schedule.alloc(issued + 2, copy, bytes, Category::Parameter, phase);
        schedule.free(issued + 3, copy, phase);
    }
    const std::int64_t copiedOut = std::max(used, issued + 3);
    const std::uint64_t parameters = schedule.newAddress();
    schedule.alloc(copiedOut, parameters, bytes, Category::Parameter, phase);
    schedule.free(copiedOut + 1, buffer, phase);
    schedule.free(std::max(released, copiedOut + 2), parameters, phase);
    return copiedOut;
}

// Where gradients are made that one reduce-scatter divides: a unit's backward in one
// pass, or the pass's whole backward for the root's.
struct GradientWindow
{
    std::int64_t beginNs = 0, endNs = 0;
};

// Per step of the trace, its chain's passes; a step without a chain (one cut short) has none.
std::vector<ChainUnits> chainsPerStep(const Trace &trace, const ChainSelection &selection, const LaneDevices &lanes,
                                      std::uint32_t device)
{
    std::vector<ChainUnits> steps;
    for (const Step &step : trace.steps) {
        try {
            steps.push_back(chooseChain(trace, selection, lanes, device, step.beginNs, step.endNs, step.number));
        } catch (const Error &) {
            steps.emplace_back();
        }
    }
    if (trace.steps.empty())
        steps.push_back(chooseChain(trace, selection, lanes, device, INT64_MIN, INT64_MAX, std::nullopt));
    return steps;
}

// What the root gathers: the model's parameters no chain layer holds. At stage 3 each
// chain layer must say what it holds.
std::int64_t rootParameterBytes(const Trace &trace, const std::vector<ChainUnits> &steps, int stage)
{
    const auto first = std::find_if(steps.begin(), steps.end(), [](const ChainUnits &units) { return !units.passes.empty(); });
    if (first == steps.end())
        throw Error("No step of the trace runs a chain of layers forward and backward, so its units are not known.");
    std::int64_t modelBytes = 0, chainBytes = 0;
    for (const Layer &layer : trace.layers) {
        if (layer.parent == kNoLayer)
            modelBytes += layer.parameterBytes;
    }
    for (const UnitSpans &unit : first->passes.front()) {
        const Layer &layer = trace.layers[unit.layer];
        if (layer.parameterBytes <= 0 && stage >= 3)
            throw Error("The trace does not say how many parameter bytes " + layer.path
                        + " holds, which a shard gathers whole (a trace recorded with the PeakLens helper says); plan "
                          "with --zero-stage 1 or 2.");
        chainBytes += layer.parameterBytes;
    }
    return std::max<std::int64_t>(0, modelBytes - chainBytes);
}

// Each pass's gradient windows and, at stage 3, its gatherings.
std::vector<GradientWindow> schedulePasses(const Trace &trace, const std::vector<ChainUnits> &steps, const Sharding &sharding,
                                           std::int64_t rootBytes, Schedule &schedule)
{
    std::vector<GradientWindow> windows;
    const auto bytesOf = [&trace](const UnitSpans &unit) { return trace.layers[unit.layer].parameterBytes; };
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const std::int64_t stepEnd = s < trace.steps.size() ? trace.steps[s].endNs : INT64_MAX;
        for (const std::vector<UnitSpans> &pass : steps[s].passes) {
            // The pass's backward ends with the last backward range of the step after it began.
            const std::int64_t passBegin = pass.front().forwardBegin;
            std::int64_t passEnd = pass.front().backwardEnd;
            for (const Range &range : trace.ranges) {
                if (range.phase == Phase::Backward && range.beginNs >= passBegin && range.endNs <= stepEnd)
                    passEnd = std::max(passEnd, range.endNs);
            }
            for (const UnitSpans &unit : pass)
                windows.push_back({unit.backwardBegin, unit.backwardEnd});
            windows.push_back({passBegin, passEnd});
            if (sharding.zeroStage < 3)
                continue;
            gather(schedule, sharding, rootBytes, passBegin, passBegin, passEnd, Phase::Forward);
            for (const UnitSpans &unit : pass)
                gather(schedule, sharding, bytesOf(unit), unit.forwardBegin, unit.forwardBegin, unit.forwardEnd, Phase::Forward);
            // The backward runs the chain from its end; a unit issues the gathering of the
            // one before it once its own is copied out.
            std::int64_t issued = pass.back().backwardBegin;
            for (std::size_t k = pass.size(); k-- > 0;)
                issued = gather(schedule, sharding, bytesOf(pass[k]), std::min(issued, pass[k].backwardBegin),
                                pass[k].backwardBegin, pass[k].backwardEnd, Phase::Backward);
        }
    }
    return windows;
}

// Gradients made in one window: whole until it ends, then reduce-scattered.
struct GradientGroup
{
    std::vector<std::pair<std::uint32_t, std::uint64_t>> blocks; // (lane, address)
    std::uint64_t inputAddr = 0;                                 // the reduce-scatter's input
    std::int64_t wholeBytes = 0;                                 // what it copied
};

struct HeldGradients
{
    std::vector<GradientGroup> groups;
    std::vector<bool> held; // per event: a gradient's allocation kept whole until its group's reduce-scatter
};

// Each gradient made in a window joins the group of the innermost (a unit's rather than
// the root's), whose reduce-scatter is scheduled as the window ends.
HeldGradients holdGradients(const Trace &trace, const std::vector<GradientWindow> &windows, Schedule &schedule)
{
    HeldGradients result;
    result.held.assign(trace.events.size(), false);
    std::map<std::int64_t, std::size_t> groupEndingAt;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        if (trace.events.category(i) != Category::Gradient || trace.events.deltaBytes(i) <= 0)
            continue;
        const std::int64_t timeNs = trace.events.timeNs(i);
        const GradientWindow *window = nullptr;
        for (const GradientWindow &candidate : windows) {
            if (candidate.beginNs <= timeNs && timeNs < candidate.endNs
                && (!window || candidate.endNs - candidate.beginNs < window->endNs - window->beginNs))
                window = &candidate;
        }
        if (!window)
            continue;
        auto [group, made] = groupEndingAt.try_emplace(window->endNs, result.groups.size());
        if (made) {
            result.groups.emplace_back();
            schedule.reduceScatter(window->endNs, group->second);
        }
        result.groups[group->second].blocks.emplace_back(trace.events.lane(i), trace.events.addr(i));
        result.held[i] = true;
    }
    return result;
}

// The rank's events as they are made: what each live block holds per lane, so that a free
// takes what its block held as the rank holds it.
class RankEvents
{
public:
    RankEvents(Trace &rank, std::size_t laneCount, int degree)
        : m_rank(rank)
        , m_live(laneCount + 1)
        , m_degree(degree)
    {
    }

    std::unordered_map<std::uint64_t, std::int64_t> &lane(std::uint32_t lane)
    {
        return m_live[std::min<std::size_t>(lane, m_live.size() - 1)];
    }

    void emit(MemoryEvent event)
    {
        auto &blocks = lane(event.lane);
        if (event.deltaBytes > 0) {
            blocks[event.addr] = event.deltaBytes;
        } else if (auto found = blocks.find(event.addr); found != blocks.end()) {
            event.deltaBytes = -found->second;
            blocks.erase(found);
        }
        m_rank.events.append(event);
    }

    // A reduce-scatter begins: the group's gradients, whole, copied into its input.
    void scatterBegins(MemoryEvent event, GradientGroup &group, std::uint64_t inputAddr)
    {
        group.wholeBytes = 0;
        for (const auto &[laneIndex, addr] : group.blocks) {
            if (auto found = lane(laneIndex).find(addr); found != lane(laneIndex).end())
                group.wholeBytes += found->second;
        }
        if (group.wholeBytes == 0)
            return;
        group.inputAddr = inputAddr;
        event.addr = inputAddr;
        event.deltaBytes = group.wholeBytes;
        emit(event);
    }

    // It ends: each gradient shrinks to its shard, and the input is freed.
    void scatterEnds(MemoryEvent event, const GradientGroup &group)
    {
        if (group.wholeBytes == 0)
            return;
        for (const auto &[laneIndex, addr] : group.blocks) {
            auto found = lane(laneIndex).find(addr);
            if (found == lane(laneIndex).end())
                continue;
            const std::int64_t bytes = found->second;
            MemoryEvent shrink = event;
            shrink.lane = laneIndex;
            shrink.addr = addr;
            shrink.deltaBytes = -bytes;
            emit(shrink);
            shrink.deltaBytes = shardOf(bytes, m_degree);
            emit(shrink);
        }
        event.addr = group.inputAddr;
        event.deltaBytes = -group.wholeBytes;
        emit(event);
    }

private:
    Trace &m_rank;
    std::vector<std::unordered_map<std::uint64_t, std::int64_t>> m_live;
    int m_degree;
};

} // namespace

std::string shardingDescription(const Sharding &sharding)
{
    static const char *const divided[] = {"", "optimizer state", "gradients and optimizer state",
                                          "parameters, gradients and optimizer state"};
    return "one rank of " + std::to_string(sharding.degree) + " sharding the traced run (ZeRO stage "
           + std::to_string(sharding.zeroStage) + ": " + divided[std::clamp(sharding.zeroStage, 0, 3)] + " divided"
           + (sharding.zeroStage == 3 ? ", each chain layer gathered whole while it runs" : "")
           + (sharding.gatherCopies ? ", through gloo" : "") + ")";
}

Trace withSharding(const Trace &trace, const ChainSelection &selection, const Sharding &sharding)
{
    if (sharding.degree < 1)
        throw Error("A shard degree is a number of ranks, 1 or more.");
    if (sharding.zeroStage < 1 || sharding.zeroStage > 3)
        throw Error("A ZeRO stage is 1, 2 or 3.");
    if (!trace.metaValue(metakey::Sharding).empty())
        throw Error("The trace is already " + trace.metaValue(metakey::Sharding) + ".");
    const PeakReport peaks = findPeaks(trace);
    if (!peaks.primary)
        throw Error("The trace allocates no memory, so there is nothing to shard.");
    const LaneDevices lanes(trace);
    const std::uint32_t device = *lanes.indexOf(peaks.devices[*peaks.primary].device);
    const int stage = sharding.zeroStage;

    const std::vector<ChainUnits> steps = chainsPerStep(trace, selection, lanes, device);
    Schedule schedule;
    const std::vector<GradientWindow> windows =
        schedulePasses(trace, steps, sharding, rootParameterBytes(trace, steps, stage), schedule);
    HeldGradients gradients;
    if (stage >= 2)
        gradients = holdGradients(trace, windows, schedule);
    else
        gradients.held.assign(trace.events.size(), false);
    const std::vector<Added> added = schedule.sorted();

    // The blocks added go to the device's first lane.
    std::uint32_t addedLane = 0;
    while (addedLane + 1 < lanes.deviceOfLane.size() && lanes.deviceOfLane[addedLane] != device)
        ++addedLane;

    Trace rank = trace;
    rank.meta[std::string(metakey::Sharding)] = shardingDescription(sharding);
    rank.events.clear();
    rank.events.reserve(trace.events.size() + added.size());
    RankEvents events(rank, trace.lanes.size(), sharding.degree);
    const auto apply = [&](const Added &a) {
        MemoryEvent event;
        event.timeNs = a.timeNs;
        event.lane = addedLane;
        event.phase = a.phase;
        event.category = a.category;
        switch (a.kind) {
        case Added::Kind::Alloc:
        case Added::Kind::Free:
            event.addr = a.addr;
            event.deltaBytes = a.kind == Added::Kind::Alloc ? a.bytes : -1; // a free takes its block's size
            events.emit(event);
            break;
        case Added::Kind::ScatterBegins:
            events.scatterBegins(event, gradients.groups[a.group], schedule.newAddress());
            break;
        case Added::Kind::ScatterEnds:
            events.scatterEnds(event, gradients.groups[a.group]);
            break;
        }
    };
    std::size_t next = 0;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        MemoryEvent event = trace.events.at(i);
        for (; next < added.size() && added[next].timeNs <= event.timeNs; ++next)
            apply(added[next]);
        if (sharded(event.category, stage)) {
            if (event.deltaBytes > 0 && !gradients.held[i])
                event.deltaBytes = shardOf(event.deltaBytes, sharding.degree);
            else if (event.deltaBytes < 0 && !events.lane(event.lane).contains(event.addr))
                event.deltaBytes = -shardOf(-event.deltaBytes, sharding.degree); // allocated before the trace
        }
        events.emit(event);
    }
    for (; next < added.size(); ++next)
        apply(added[next]);
    return rank;
}

} // namespace peaklens
