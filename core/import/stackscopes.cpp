// SPDX-License-Identifier: Apache-2.0
#include "stackscopes.h"

#include "core/trace/frameclassifier.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace peaklens {

namespace {

constexpr std::uint32_t kNone = UINT32_MAX;

int rank(Phase phase)
{
    switch (phase) {
    case Phase::Other:
        return 0;
    case Phase::Forward:
        return 1;
    case Phase::Optimizer:
        return 2;
    case Phase::Backward:
        return 3;
    }
    return 0;
}

// One module call in a stack: the frame that made it and the frame running inside it.
struct CallLevel
{
    std::uint32_t site = kNone;   // the caller's frame: file, line and function of the call
    std::uint32_t callee = kNone; // the module's forward (or hook) as the stack caught it
};

// Per stack: the phase its frames prove and its chain of module calls. Stacks are a
// prefix tree whose parents come first, so each node extends its parent's state.
class StackReader
{
public:
    explicit StackReader(const StackTable &stacks)
    {
        const auto &frames = stacks.frames();
        std::vector<Phase> hints(frames.size());
        std::vector<std::uint8_t> python(frames.size()), moduleCall(frames.size()), forward(frames.size());
        for (std::size_t f = 0; f < frames.size(); ++f) {
            hints[f] = phaseHint(frames[f]);
            moduleCall[f] = isModuleCallFrame(frames[f]);
            // Wrappers (hooks, decorators, torch's own Python) neither make a call nor
            // name one: a call they pass on is named after the code that called them.
            python[f] = isPythonFrame(frames[f]) && !isPassThroughFrame(frames[f]);
            forward[f] = python[f] && frames[f].function == "forward";
        }
        const auto &nodes = stacks.nodes();
        m_states.resize(nodes.size());
        m_chains.push_back({kNone, {}}); // chain 0: no module call
        for (std::size_t n = 1; n < nodes.size(); ++n) {
            NodeState state = nodes[n].parent < n ? m_states[nodes[n].parent] : NodeState{};
            const std::uint32_t f = nodes[n].frame;
            if (rank(hints[f]) > rank(state.phase))
                state.phase = hints[f];
            // Outermost to innermost, Python frames only: a module-call frame opens a call
            // made by the last Python frame before it; the next Python frame runs inside.
            if (moduleCall[f]) {
                if (!state.pending) {
                    state.pending = true;
                    state.pendingSite = state.lastPython;
                }
            } else if (python[f]) {
                // Without module-call frames (some builds leave them out), a forward
                // function is a module's, called by the Python frame before it.
                const std::uint32_t site = state.pending ? state.pendingSite : forward[f] ? state.lastPython : kNone;
                if (site != kNone && state.depth < kMaxCallDepth) {
                    state.chain = chainNode(state.chain, {site, f});
                    ++state.depth;
                }
                state.pending = false;
                state.lastPython = f;
            }
            m_states[n] = state;
        }
    }

    Phase phaseOf(std::uint32_t stack) const { return stack < m_states.size() ? m_states[stack].phase : Phase::Other; }

    // The module calls of a stack, outermost first.
    std::vector<CallLevel> chainOf(std::uint32_t stack) const
    {
        std::vector<CallLevel> chain;
        for (std::uint32_t c = stack < m_states.size() ? m_states[stack].chain : 0; c != 0; c = m_chains[c].parent)
            chain.push_back(m_chains[c].level);
        std::reverse(chain.begin(), chain.end());
        return chain;
    }

private:
    // Deeper calls (recursion, damage, a library's inner modules) stay in the tenth level:
    // a name of more levels is more than a person reads.
    static constexpr std::uint32_t kMaxCallDepth = 10;

    struct NodeState
    {
        Phase phase = Phase::Other;
        std::uint32_t chain = 0;
        std::uint32_t depth = 0;
        std::uint32_t lastPython = kNone;
        std::uint32_t pendingSite = kNone;
        bool pending = false;
    };
    struct ChainNode
    {
        std::uint32_t parent;
        CallLevel level;
    };

    std::uint32_t chainNode(std::uint32_t parent, CallLevel level)
    {
        auto [it, inserted] =
            m_chainIds.try_emplace({parent, level.site, level.callee}, static_cast<std::uint32_t>(m_chains.size()));
        if (inserted)
            m_chains.push_back({parent, level});
        return it->second;
    }

    std::vector<NodeState> m_states;
    std::vector<ChainNode> m_chains;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> m_chainIds;
};

// A layer as the calls make it: the index-th call from `site` within a call of `parent`.
struct LayerKey
{
    std::uint32_t parent = kNone;
    std::uint32_t site = kNone;
    std::uint32_t index = 0;
    std::uint32_t callee = kNone; // the first call's callee frame, for the layer's kind
};

struct CallSpan
{
    std::uint32_t key;
    std::int64_t beginNs;
    std::int64_t endNs;
};

// Follows the module calls of forward allocations in time order, telling calls apart.
class CallTracker
{
public:
    CallTracker(const StackTable &stacks, std::vector<LayerKey> &keys, std::vector<CallSpan> &spans)
        : m_frames(stacks.frames())
        , m_keys(keys)
        , m_spans(spans)
    {
    }

    // The layer key of an allocation at timeNs whose stack makes `chain`.
    std::uint32_t enter(const std::vector<CallLevel> &chain, std::int64_t timeNs)
    {
        std::size_t depth = 0;
        for (; depth < chain.size() && depth < m_active.size(); ++depth) {
            const Active &call = m_active[depth];
            const Frame &callee = m_frames[chain[depth].callee];
            const Frame &current = m_frames[call.callee];
            if (call.site != chain[depth].site || callee.file != current.file || callee.function != current.function
                || callee.line < call.line)
                break; // a new call at this depth
            m_active[depth].line = callee.line;
        }
        end(depth);
        for (; depth < chain.size(); ++depth) {
            const std::uint32_t parent = depth == 0 ? kNone : m_active[depth - 1].key;
            const std::uint32_t index = depth == 0 ? 0 : m_active[depth - 1].children[chain[depth].site]++;
            auto [it, inserted] =
                m_keyIds.try_emplace({parent, chain[depth].site, index}, static_cast<std::uint32_t>(m_keys.size()));
            if (inserted)
                m_keys.push_back({parent, chain[depth].site, index, chain[depth].callee});
            m_active.push_back(
                {it->second, chain[depth].site, chain[depth].callee, m_frames[chain[depth].callee].line, timeNs, {}});
        }
        end(chain.size()); // calls deeper than this allocation have returned
        for (Active &call : m_active)
            call.lastNs = timeNs;
        return m_active.empty() ? kNone : m_active.back().key;
    }

    void finish() { end(0); }

private:
    struct Active
    {
        std::uint32_t key;
        std::uint32_t site;
        std::uint32_t callee;
        std::int32_t line; // how far the callee has got
        std::int64_t firstNs;
        std::map<std::uint32_t, std::uint32_t> children; // calls made so far, per site
        std::int64_t lastNs = 0;
    };

    void end(std::size_t depth)
    {
        while (m_active.size() > depth) {
            m_spans.push_back({m_active.back().key, m_active.back().firstNs, m_active.back().lastNs});
            m_active.pop_back();
        }
    }

    const std::vector<Frame> &m_frames;
    std::vector<LayerKey> &m_keys;
    std::vector<CallSpan> &m_spans;
    std::vector<Active> m_active;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> m_keyIds;
};

// Layer names keep each part short: "model:253", a long file name shortened in the middle.
constexpr std::size_t kMaxPartLength = 48;

// "model:253" for a call made at model.py line 253; dots would nest paths, so they go. A
// notebook cell's file is a number ("/tmp/ipykernel_7/3105878423.py"): it reads "cell".
std::string siteName(const Frame &site, std::size_t room)
{
    std::string stem(fileBaseName(site.file));
    if (stem.ends_with(".py"))
        stem.resize(stem.size() - 3);
    if (stem.empty())
        stem = site.function;
    if (!stem.empty() && std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
        stem = "cell";
    std::replace(stem.begin(), stem.end(), '.', '_');
    const std::string line = ":" + std::to_string(site.line);
    if (stem.size() + line.size() > room) {
        const std::size_t keep = room > line.size() + 3 ? room - line.size() - 3 : 1; // "…" is 3 bytes
        stem = stem.substr(0, (keep + 1) / 2) + "\u2026" + stem.substr(stem.size() - keep / 2);
    }
    return stem + line;
}

// Creates the layers the keys stand for: a site called more than once within one parent
// call numbers its calls ("model:253[0]", "model:253[1]", ...), like a ModuleList of blocks.
// Two sites that would read alike under one parent (two files of one name) are told apart
// by "~2", in the order they first ran.
std::vector<std::uint32_t> createLayers(TraceBuilder &builder, const std::vector<LayerKey> &keys)
{
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> calls; // (parent, site) -> how many
    for (const LayerKey &key : keys) {
        std::uint32_t &count = calls[{key.parent, key.site}];
        count = std::max(count, key.index + 1);
    }
    const auto &frames = builder.stacks().frames();
    std::map<std::pair<std::uint32_t, std::string>, std::vector<std::uint32_t>> namesakes; // (parent, name) -> sites
    std::vector<std::uint32_t> layers(keys.size());
    std::vector<std::string> paths(keys.size());
    for (std::size_t k = 0; k < keys.size(); ++k) { // parents were made first
        const LayerKey &key = keys[k];
        const bool repeated = calls[{key.parent, key.site}] > 1;
        const std::string index = repeated ? "[" + std::to_string(key.index) + "]" : std::string();
        std::string part = siteName(frames[key.site], kMaxPartLength - index.size() - 3); // room for "~9"
        std::vector<std::uint32_t> &sites = namesakes[{key.parent, part}];
        const auto found = std::find(sites.begin(), sites.end(), key.site);
        const std::size_t which = found - sites.begin();
        if (found == sites.end())
            sites.push_back(key.site);
        if (which > 0)
            part += "~" + std::to_string(which + 1);
        std::string &path = paths[k];
        if (key.parent != kNone)
            path = paths[key.parent] + ".";
        path += part;
        path += index;
        layers[k] = builder.layer(paths[k]);
        const Frame &callee = frames[key.callee];
        builder.setLayerInfo(layers[k], callee.function + " in " + std::string(fileBaseName(callee.file)), 0);
    }
    return layers;
}

// True when the stacks hold Python frames and no native ones (the one-frame stacks of
// memory from before the trace aside).
bool recordsPythonFramesOnly(const StackTable &stacks)
{
    bool python = false;
    for (const Frame &frame : stacks.frames()) {
        if (isPythonFrame(frame))
            python = true;
        else if (!frame.file.empty() || (frame.function != kBeforeTrace && frame.function != kTotalsOnly))
            return false;
    }
    return python;
}

// One step per forward-backward-optimizer cycle: a step begins with the first forward
// allocation after a backward or optimizer one.
std::vector<Step> stepsFromPhases(const std::vector<MemoryEvent> &events)
{
    std::vector<Step> steps;
    bool sawLaterPhase = true;
    for (const MemoryEvent &event : events) {
        if (event.deltaBytes <= 0)
            continue;
        if (event.phase == Phase::Forward && sawLaterPhase) {
            steps.push_back({static_cast<std::int64_t>(steps.size()), event.timeNs, event.timeNs});
            sawLaterPhase = false;
        } else if (event.phase == Phase::Backward || event.phase == Phase::Optimizer) {
            sawLaterPhase = true;
        }
    }
    for (std::size_t s = 0; s < steps.size(); ++s)
        steps[s].endNs = s + 1 < steps.size() ? steps[s + 1].beginNs : events.back().timeNs + 1;
    return steps;
}

std::int64_t stepOf(const std::vector<Step> &steps, std::int64_t timeNs)
{
    auto after =
        std::upper_bound(steps.begin(), steps.end(), timeNs, [](std::int64_t t, const Step &s) { return t < s.beginNs; });
    return after != steps.begin() && std::prev(after)->contains(timeNs) ? std::prev(after)->number : kNoStep;
}

std::vector<Step> sortedSteps(const Trace &trace)
{
    std::vector<Step> steps = trace.steps;
    std::sort(steps.begin(), steps.end(), [](const Step &a, const Step &b) { return a.beginNs < b.beginNs; });
    return steps;
}

// The span of each phase within each step, as phase ranges, where the trace has none.
void addPhaseRanges(TraceBuilder &builder, const std::vector<MemoryEvent> &events, const std::vector<Step> &steps)
{
    std::map<std::pair<std::int64_t, Phase>, std::pair<std::int64_t, std::int64_t>> spans;
    for (const MemoryEvent &event : events) {
        if (event.phase == Phase::Other || event.deltaBytes <= 0)
            continue;
        auto [it, inserted] = spans.try_emplace({stepOf(steps, event.timeNs), event.phase}, event.timeNs, event.timeNs);
        it->second.first = std::min(it->second.first, event.timeNs);
        it->second.second = std::max(it->second.second, event.timeNs);
    }
    for (const Range &range : builder.current().ranges)
        spans.erase({range.step, range.phase});
    for (const auto &[key, span] : spans)
        builder.addRange(Range{kNoLayer, key.second, key.first, span.first, span.second, 0});
}

} // namespace

StackScopesResult deriveScopesFromStacks(TraceBuilder &builder, std::vector<MemoryEvent> &events)
{
    StackScopesResult result;
    const StackReader reader(builder.stacks());
    // Stacks of Python frames alone (PyTorch on Windows records no C++ frames) leave the
    // autograd engine's allocations with none: its device threads run no Python. Once the
    // forward has begun, such an allocation is the backward's.
    const bool pythonOnly = recordsPythonFramesOnly(builder.stacks());
    bool forwardBegan = false;
    for (MemoryEvent &event : events) {
        if (event.deltaBytes <= 0)
            continue;
        if (event.phase == Phase::Other) {
            if (event.stack != StackTable::kEmptyStack)
                event.phase = reader.phaseOf(event.stack);
            else if (pythonOnly && forwardBegan)
                event.phase = Phase::Backward;
            result.phased += event.phase != Phase::Other;
        }
        forwardBegan = forwardBegan || event.phase == Phase::Forward;
    }

    // Layers from the module calls of forward allocations.
    std::vector<LayerKey> keys;
    std::vector<CallSpan> spans;
    std::vector<std::uint32_t> keyOfEvent(events.size(), kNone);
    CallTracker tracker(builder.stacks(), keys, spans);
    for (std::size_t i = 0; i < events.size(); ++i) {
        const MemoryEvent &event = events[i];
        if (event.deltaBytes <= 0)
            continue;
        // Any other allocation (the loss, the backward, the optimizer) ends the calls it
        // is not in: a model called again in the next step is a new call of the same layers.
        const bool forward = event.phase == Phase::Forward && event.layer == kNoLayer;
        keyOfEvent[i] = tracker.enter(forward ? reader.chainOf(event.stack) : std::vector<CallLevel>{}, event.timeNs);
    }
    tracker.finish();
    const std::vector<std::uint32_t> layers = createLayers(builder, keys);
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (keyOfEvent[i] != kNone) {
            events[i].layer = layers[keyOfEvent[i]];
            ++result.layered;
        }
    }

    if (builder.current().steps.empty() && !events.empty()) {
        for (const Step &step : stepsFromPhases(events))
            builder.addStep(step);
        result.steps = builder.current().steps.size();
    }
    const std::vector<Step> steps = sortedSteps(builder.current());
    for (const CallSpan &span : spans)
        builder.addRange(Range{layers[span.key], Phase::Forward, stepOf(steps, span.beginNs), span.beginNs, span.endNs, 0});
    addPhaseRanges(builder, events, steps);
    return result;
}

std::size_t forwardBeforeBackward(TraceBuilder &builder, std::vector<MemoryEvent> &events, const std::vector<bool> &attributable)
{
    const Trace &trace = builder.current();
    const std::vector<Step> steps = sortedSteps(trace);
    std::map<std::int64_t, std::int64_t> backwardBegins; // step number -> first backward
    for (const Range &range : trace.ranges) {
        if (range.phase != Phase::Backward)
            continue;
        const std::int64_t step = stepOf(steps, range.beginNs);
        auto [it, inserted] = backwardBegins.try_emplace(step, range.beginNs);
        it->second = std::min(it->second, range.beginNs);
    }
    std::size_t given = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        MemoryEvent &event = events[i];
        if (!attributable[i] || event.deltaBytes <= 0 || event.phase != Phase::Other || event.layer != kNoLayer)
            continue;
        const std::int64_t step = stepOf(steps, event.timeNs);
        auto begin = backwardBegins.find(step);
        if (step != kNoStep && begin != backwardBegins.end() && event.timeNs < begin->second) {
            event.phase = Phase::Forward;
            ++given;
        }
    }
    if (given > 0)
        addPhaseRanges(builder, events, steps);
    return given;
}

} // namespace peaklens
