#include "layerstats.h"

#include <algorithm>

namespace peaklens {

namespace {

void addTimes(const Trace &trace, std::vector<LayerStats> &stats)
{
    // The (layer, step) pairs with a forward or a backward range: times are per step.
    std::vector<std::pair<std::uint32_t, std::int64_t>> forwardSteps, backwardSteps;
    for (const Range &range : trace.ranges) {
        if (range.layer == kNoLayer)
            continue;
        LayerStats &s = stats[range.layer];
        if (range.phase == Phase::Forward) {
            s.forwardNs += range.durationNs();
            ++s.forwardCalls;
            forwardSteps.emplace_back(range.layer, range.step);
        } else if (range.phase == Phase::Backward) {
            s.backwardNs += range.durationNs();
            ++s.backwardCalls;
            backwardSteps.emplace_back(range.layer, range.step);
        }
    }
    const auto perStep = [&stats](std::vector<std::pair<std::uint32_t, std::int64_t>> &pairs, std::int64_t LayerStats::*ns) {
        // Ranges come in time order, so a layer's steps rarely go back: count the rises, and
        // sort only when one does go back.
        std::vector<std::int64_t> distinct(stats.size()), last(stats.size());
        bool rising = true;
        for (const auto &[layer, step] : pairs) {
            if (distinct[layer] == 0 || step > last[layer]) {
                ++distinct[layer];
                last[layer] = step;
            } else if (step < last[layer]) {
                rising = false;
                break;
            }
        }
        if (!rising) {
            std::sort(pairs.begin(), pairs.end());
            pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
            std::fill(distinct.begin(), distinct.end(), 0);
            for (const auto &pair : pairs)
                ++distinct[pair.first];
        }
        for (std::size_t i = 0; i < stats.size(); ++i) {
            if (distinct[i] > 0)
                stats[i].*ns /= distinct[i];
        }
    };
    perStep(forwardSteps, &LayerStats::forwardNs);
    perStep(backwardSteps, &LayerStats::backwardNs);
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
    // (step, begin) of every backward range; in time order they are mostly sorted already.
    std::vector<std::pair<std::int64_t, std::int64_t>> backward;
    for (const Range &range : trace.ranges) {
        if (range.phase == Phase::Backward)
            backward.emplace_back(range.step, range.beginNs);
    }
    if (!std::is_sorted(backward.begin(), backward.end()))
        std::sort(backward.begin(), backward.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> stepBegins;
    stepBegins.reserve(trace.steps.size());
    for (const Step &step : trace.steps)
        stepBegins.emplace_back(step.number, step.beginNs);
    // Where two steps share a number, the first in time counts.
    std::stable_sort(stepBegins.begin(), stepBegins.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<BackwardStart> starts;
    for (std::size_t i = 0; i < backward.size(); ++i) {
        if (i > 0 && backward[i].first == backward[i - 1].first)
            continue; // the step's earliest backward range came first
        const std::int64_t step = backward[i].first;
        const auto begin = std::lower_bound(stepBegins.begin(), stepBegins.end(), step,
                                            [](const auto &entry, std::int64_t number) { return entry.first < number; });
        starts.push_back({step, backward[i].second,
                          begin == stepBegins.end() || begin->first != step ? INT64_MIN : begin->second});
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
        while (m_nextStart < m_starts.size() && events.timeNs(i) >= m_starts[m_nextStart].timeNs)
            count(m_starts[m_nextStart++]);
        m_live.apply(events, i, first + i, m_lanes.deviceOfLane[events.lane(i)]);
    }
}

std::vector<LayerStats> LayerScan::finish()
{
    // Backward passes that begin after the last event count what is still live.
    while (m_nextStart < m_starts.size())
        count(m_starts[m_nextStart++]);
    return m_stats;
}

void LayerScan::count(const BackwardStart &start)
{
    std::fill(m_selfBytes.begin(), m_selfBytes.end(), 0);
    m_live.forEach([&](const LiveBlocks::Block &block) {
        if (block.phase == Phase::Forward && block.layer != kNoLayer && block.timeNs >= start.stepBeginNs)
            m_selfBytes[block.layer] += block.bytes;
    });
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
