// SPDX-License-Identifier: Apache-2.0
#include "lifetimecategories.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace peaklens {

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::vector<std::int64_t> beginsOf(const Trace &trace, Phase phase)
{
    std::vector<std::int64_t> begins;
    for (const Range &range : trace.ranges) {
        if (range.phase == phase)
            begins.push_back(range.beginNs);
    }
    return begins; // ranges are sorted by begin
}

std::int64_t firstAfter(const std::vector<std::int64_t> &times, std::int64_t t)
{
    auto next = std::upper_bound(times.begin(), times.end(), t);
    return next == times.end() ? kNever : *next;
}

class Classifier
{
public:
    explicit Classifier(const Trace &trace)
        : m_trace(trace)
        , m_backwardBegins(beginsOf(trace, Phase::Backward))
        , m_forwardBegins(beginsOf(trace, Phase::Forward))
        , m_optimizerBegins(beginsOf(trace, Phase::Optimizer))
        , m_backwardEnds(trace.steps.size(), kNever)
    {
        for (const Range &range : trace.ranges) {
            if (range.phase == Phase::Optimizer)
                m_optimizerSpans.emplace_back(range.beginNs, range.endNs);
            if (range.phase != Phase::Backward)
                continue;
            if (const auto step = trace.stepAt(range.beginNs)) {
                std::int64_t &end = m_backwardEnds[*step];
                end = end == kNever ? range.endNs : std::max(end, range.endNs);
            }
        }
    }

    // The category of an allocation made at `allocNs` in `phase` and freed at `freeNs`
    // (kNever when it outlives the trace).
    Category classify(Phase phase, std::int64_t allocNs, std::int64_t freeNs) const
    {
        switch (phase) {
        case Phase::Forward:
            // Kept past its step's end: a buffer the process keeps (a library's workspace
            // made at its first call, a cache), not what a backward needed.
            if (outlivesItsStep(allocNs, freeNs))
                return Category::Unknown;
            return lifetime(freeNs, firstAfter(m_backwardBegins, allocNs), Category::Activation);
        case Phase::Backward:
            return lifetime(freeNs, backwardEnd(allocNs), Category::Gradient);
        case Phase::Optimizer:
            return lifetime(freeNs, stepEnd(allocNs), Category::OptimizerState);
        case Phase::Other:
            // Made before training began and kept through the first step: the model's
            // weights and buffers.
            if (!m_trace.steps.empty() && allocNs <= m_trace.steps.front().beginNs && freeNs >= m_trace.steps.front().endNs)
                return Category::Parameter;
            // Made before training began and freed by the optimizer: state it replaced.
            if (!m_trace.steps.empty() && allocNs <= m_trace.steps.front().beginNs && inOptimizer(freeNs))
                return Category::OptimizerState;
            break;
        }
        return Category::Unknown;
    }

private:
    static Category lifetime(std::int64_t freeNs, std::int64_t boundaryNs, Category kept)
    {
        if (freeNs == kNever)
            return boundaryNs == kNever ? Category::Unknown : kept;
        return freeNs < boundaryNs ? Category::Temporary : kept;
    }

    bool outlivesItsStep(std::int64_t allocNs, std::int64_t freeNs) const
    {
        const auto step = m_trace.stepAt(allocNs);
        return step && freeNs > m_trace.steps[*step].endNs;
    }

    std::int64_t stepEnd(std::int64_t t) const
    {
        if (auto step = m_trace.stepAt(t))
            return m_trace.steps[*step].endNs;
        return firstAfter(m_forwardBegins, t);
    }

    // The end of the backward pass an allocation made at `t` belongs to: the optimizer's
    // first range after it in its step, else the step's last backward range.
    std::int64_t backwardEnd(std::int64_t t) const
    {
        const auto step = m_trace.stepAt(t);
        if (!step)
            return stepEnd(t);
        if (const std::int64_t optimizer = firstAfter(m_optimizerBegins, t); optimizer < m_trace.steps[*step].endNs)
            return optimizer;
        return m_backwardEnds[*step] != kNever ? m_backwardEnds[*step] : m_trace.steps[*step].endNs;
    }

    bool inOptimizer(std::int64_t t) const
    {
        return std::any_of(m_optimizerSpans.begin(), m_optimizerSpans.end(),
                           [t](const auto &span) { return t >= span.first && t <= span.second; });
    }

    const Trace &m_trace;
    std::vector<std::int64_t> m_backwardBegins;
    std::vector<std::int64_t> m_forwardBegins;
    std::vector<std::int64_t> m_optimizerBegins;
    std::vector<std::int64_t> m_backwardEnds; // per step
    std::vector<std::pair<std::int64_t, std::int64_t>> m_optimizerSpans;
};

struct BlockKey
{
    Device device;
    std::uint64_t addr;
    bool operator==(const BlockKey &) const = default;
};

struct BlockKeyHash
{
    std::size_t operator()(const BlockKey &key) const
    {
        return std::hash<std::uint64_t>()(key.addr) ^ (std::size_t(key.device.index) << 1 | std::size_t(key.device.type));
    }
};

} // namespace

// What is kept of an allocation not yet classified until its free comes.
struct Pending
{
    std::size_t index;
    std::int64_t timeNs;
    Phase phase;
};

struct LifetimeClassifier::State
{
    explicit State(const Trace &trace)
        : trace(trace)
        , classifier(trace)
    {
    }

    const Trace &trace;
    const Classifier classifier;
    std::unordered_map<BlockKey, Pending, BlockKeyHash> live;
};

LifetimeClassifier::LifetimeClassifier(const Trace &trace)
    : m_state(std::make_unique<State>(trace))
{
}

LifetimeClassifier::~LifetimeClassifier() = default;

void LifetimeClassifier::add(const MemoryEvents &events, std::size_t first, const Decide &decide)
{
    State &state = *m_state;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events.category(i) != Category::Unknown)
            continue;
        const BlockKey key{state.trace.lanes[events.lane(i)].device, events.addr(i)};
        if (events.deltaBytes(i) > 0) {
            state.live[key] = Pending{first + i, events.timeNs(i), events.phase(i)};
            continue;
        }
        auto block = state.live.find(key);
        if (block == state.live.end())
            continue;
        const Pending alloc = block->second;
        state.live.erase(block);
        const Category category = state.classifier.classify(alloc.phase, alloc.timeNs, events.timeNs(i));
        decide(alloc.index, category);
        decide(first + i, category);
    }
}

void LifetimeClassifier::finish(const Decide &decide)
{
    for (const auto &[key, alloc] : m_state->live)
        decide(alloc.index, m_state->classifier.classify(alloc.phase, alloc.timeNs, kNever));
    m_state->live.clear();
}

void classifyByLifetime(Trace &trace)
{
    LifetimeClassifier classifier(trace);
    MemoryEvents &events = trace.events;
    const auto decide = [&events](std::size_t index, Category category) { events.setCategory(index, category); };
    classifier.add(events, 0, decide);
    classifier.finish(decide);
}

} // namespace peaklens
