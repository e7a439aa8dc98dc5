// SPDX-License-Identifier: Apache-2.0
#include "layerstats.h"

#include <algorithm>
#include <unordered_set>

namespace peaklens {

namespace {

// The steps a layer has ranges of in one phase: times are per step. Ranges come in time
// order, so a layer's steps rarely go back: the rises are counted, and the pairs sorted
// only when one does go back.
class StepsOfLayers
{
public:
    explicit StepsOfLayers(std::size_t layers)
        : m_seen(layers)
    {
    }

    void add(std::uint32_t layer, std::int64_t step)
    {
        Seen &seen = m_seen[layer];
        if (seen.distinct == 0 || step > seen.last) {
            ++seen.distinct;
            seen.last = step;
        } else if (step < seen.last) {
            m_rising = false;
        }
    }

    // Each layer's count of distinct steps; `pairs` gives them all again when steps went back.
    template<typename Pairs>
    std::vector<std::int64_t> distinct(Pairs pairs) const
    {
        std::vector<std::int64_t> counts(m_seen.size());
        if (m_rising) {
            for (std::size_t i = 0; i < counts.size(); ++i)
                counts[i] = m_seen[i].distinct;
            return counts;
        }
        std::vector<std::pair<std::uint32_t, std::int64_t>> all = pairs();
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        for (const auto &pair : all)
            ++counts[pair.first];
        return counts;
    }

private:
    struct Seen
    {
        std::int64_t distinct = 0;
        std::int64_t last = 0;
    };
    std::vector<Seen> m_seen;
    bool m_rising = true;
};

void addTimes(const Trace &trace, std::vector<LayerStats> &stats)
{
    StepsOfLayers forwardSteps(stats.size()), backwardSteps(stats.size());
    for (const Range &range : trace.ranges) {
        if (range.layer == kNoLayer)
            continue;
        LayerStats &s = stats[range.layer];
        if (range.phase == Phase::Forward) {
            s.forwardNs += range.durationNs();
            ++s.forwardCalls;
            forwardSteps.add(range.layer, range.step);
        } else if (range.phase == Phase::Backward) {
            s.backwardNs += range.durationNs();
            ++s.backwardCalls;
            backwardSteps.add(range.layer, range.step);
        }
    }
    const auto perStep = [&](const StepsOfLayers &steps, Phase phase, std::int64_t LayerStats::*ns) {
        const std::vector<std::int64_t> distinct = steps.distinct([&] {
            std::vector<std::pair<std::uint32_t, std::int64_t>> pairs;
            for (const Range &range : trace.ranges) {
                if (range.layer != kNoLayer && range.phase == phase)
                    pairs.emplace_back(range.layer, range.step);
            }
            return pairs;
        });
        for (std::size_t i = 0; i < stats.size(); ++i) {
            if (distinct[i] > 0)
                stats[i].*ns /= distinct[i];
        }
    };
    perStep(forwardSteps, Phase::Forward, &LayerStats::forwardNs);
    perStep(backwardSteps, Phase::Backward, &LayerStats::backwardNs);
}

} // namespace

std::vector<LayerStats> computeLayerStats(const Trace &trace)
{
    LayerScan scan(trace);
    scan.add(trace.events, 0);
    return scan.finish();
}

std::vector<LayerScan::BackwardStart> LayerScan::backwardStarts(const Trace &trace)
{
    // (step, its earliest backward begin), by step. Ranges come in time order, so steps
    // rarely go back; where one does, every backward range's pair is sorted.
    std::vector<std::pair<std::int64_t, std::int64_t>> firsts;
    bool ordered = true;
    for (const Range &range : trace.ranges) {
        if (range.phase != Phase::Backward)
            continue;
        if (!firsts.empty() && range.step == firsts.back().first) {
            firsts.back().second = std::min(firsts.back().second, range.beginNs);
        } else if (firsts.empty() || range.step > firsts.back().first) {
            firsts.emplace_back(range.step, range.beginNs);
        } else {
            ordered = false;
            break;
        }
    }
    if (!ordered) {
        std::vector<std::pair<std::int64_t, std::int64_t>> backward;
        for (const Range &range : trace.ranges) {
            if (range.phase == Phase::Backward)
                backward.emplace_back(range.step, range.beginNs);
        }
        std::sort(backward.begin(), backward.end());
        firsts.clear();
        for (const auto &pair : backward) {
            if (firsts.empty() || pair.first != firsts.back().first)
                firsts.push_back(pair);
        }
    }
    std::vector<const Step *> byNumber;
    byNumber.reserve(trace.steps.size());
    for (const Step &step : trace.steps)
        byNumber.push_back(&step);
    // Where two steps share a number, the first in time counts.
    std::stable_sort(byNumber.begin(), byNumber.end(), [](const Step *a, const Step *b) { return a->number < b->number; });
    std::vector<BackwardStart> starts;
    for (const auto &[step, timeNs] : firsts) {
        const auto found = std::lower_bound(byNumber.begin(), byNumber.end(), step,
                                            [](const Step *entry, std::int64_t number) { return entry->number < number; });
        const bool known = found != byNumber.end() && (*found)->number == step;
        starts.push_back({step, timeNs, known ? (*found)->beginNs : INT64_MIN, known ? (*found)->endNs : INT64_MAX});
    }
    std::sort(starts.begin(), starts.end(), [](const auto &a, const auto &b) { return a.timeNs < b.timeNs; });
    return starts;
}

LayerScan::LayerScan(const Trace &trace)
    : m_trace(trace)
    , m_lanes(trace)
    , m_stats(trace.layers.size())
    , m_starts(backwardStarts(trace))
    , m_selfBytes(trace.layers.size())
{
    for (std::size_t i = 0; i < m_stats.size(); ++i)
        m_stats[i].layer = static_cast<std::uint32_t>(i);
    addTimes(trace, m_stats);
}

void LayerScan::add(const MemoryEvents &events, std::size_t first, std::size_t begin, std::size_t end)
{
    for (std::size_t i = begin; i < end; ++i) {
        const std::int64_t t = events.timeNs(i);
        while (true) {
            if (m_counted && t >= m_counted->stepEndNs) {
                settle(true);
            } else if (m_nextStart < m_starts.size() && t >= m_starts[m_nextStart].timeNs) {
                settle(false); // a step whose end the ranges never gave
                count(m_starts[m_nextStart++]);
            } else {
                break;
            }
        }
        m_live.apply(events, i, first + i, m_lanes.deviceOfLane[events.lane(i)]);
    }
}

std::vector<LayerStats> LayerScan::finish()
{
    // Backward passes that begin after the last event count what is still live; what is
    // live at the end was live at the end of every step that ended.
    while (m_nextStart < m_starts.size()) {
        settle(true);
        count(m_starts[m_nextStart++]);
    }
    settle(m_counted && m_counted->stepEndNs != INT64_MAX);
    return m_stats;
}

void LayerScan::count(const BackwardStart &start)
{
    m_counted = start;
    m_candidates.clear();
    m_live.forEach([&](const LiveBlocks::Block &block) {
        if (block.phase == Phase::Forward && block.layer != kNoLayer && block.timeNs >= start.stepBeginNs)
            m_candidates.push_back({block.event, block.layer, block.bytes});
    });
}

// The blocks counted at a backward's start that are still live at its step's end (when
// `stepEnded`) were kept by the process (a library's workspace made at its first call, a
// cache), not for the backward: they are left out.
void LayerScan::settle(bool stepEnded)
{
    if (!m_counted)
        return;
    m_counted.reset();
    std::unordered_set<std::uint32_t> kept;
    if (stepEnded) {
        std::unordered_set<std::uint32_t> candidates;
        for (const Candidate &candidate : m_candidates)
            candidates.insert(candidate.event);
        m_live.forEach([&](const LiveBlocks::Block &block) {
            if (candidates.count(block.event))
                kept.insert(block.event);
        });
    }
    std::fill(m_selfBytes.begin(), m_selfBytes.end(), 0);
    for (const Candidate &candidate : m_candidates) {
        if (!kept.count(candidate.event))
            m_selfBytes[candidate.layer] += candidate.bytes;
    }
    // Roll up: a parent always comes before its children, so walk children first.
    std::vector<std::int64_t> inclusive = m_selfBytes;
    for (std::size_t i = m_stats.size(); i-- > 0;) {
        const std::uint32_t parent = m_trace.layers[i].parent;
        if (parent != kNoLayer)
            inclusive[parent] += inclusive[i];
    }
    for (std::size_t i = 0; i < m_stats.size(); ++i) {
        m_stats[i].selfActivationBytes = std::max(m_stats[i].selfActivationBytes, m_selfBytes[i]);
        m_stats[i].activationBytes = std::max(m_stats[i].activationBytes, inclusive[i]);
    }
}

} // namespace peaklens
