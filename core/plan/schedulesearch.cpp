// SPDX-License-Identifier: Apache-2.0
#include "schedulesearch.h"

#include <algorithm>

namespace peaklens {

namespace {

std::int64_t orNone(std::int64_t value, std::int64_t plus)
{
    return value == INT64_MIN ? INT64_MIN : value + plus;
}

} // namespace

ScheduleSearch::ScheduleSearch(const CostModel &model, std::size_t slots, Rounding rounding)
    : m_model(model)
    , m_n(model.layers.size())
    , m_slots(std::max<std::size_t>(slots, 1))
    , m_rounding(rounding)
{
    // Above the highest value any check compares, plus every hold a nested unit can take
    // off its headroom, everything fits: headroom is counted up to there.
    std::int64_t highest = 0, holds = 0, widest = 0;
    const auto raise = [&](std::int64_t value) { highest = std::max(highest, value); };
    for (std::int64_t value : model.forwardPeakBytes)
        raise(value);
    for (std::int64_t value : model.gapPeakBytes)
        raise(value);
    m_keptSum.assign(m_n + 1, 0);
    m_timeSum.assign(m_n + 1, 0);
    for (std::size_t k = 0; k < m_n; ++k) {
        const ChainLayer &layer = model.layers[k];
        raise(layer.backwardLevelPeakBytes);
        raise(layer.backwardPeakBytes);
        raise(layer.recomputePeakBytes);
        raise(layer.levelBeforeRecomputeBytes);
        holds += std::max<std::int64_t>(0, layer.heldInBackwardBytes);
        widest = std::max(widest, layer.retainedBytes + layer.forwardRiseBytes);
        m_keptSum[k + 1] = m_keptSum[k] + layer.keptBytes;
        m_timeSum[k + 1] = m_timeSum[k] + layer.recomputeNs;
    }
    const std::int64_t top = highest + widest + 2 * holds + 1;
    m_slot = std::max<std::int64_t>(1, top / static_cast<std::int64_t>(m_slots));
    m_highest = top / m_slot * m_slot;
}

std::int64_t ScheduleSearch::slotted(std::int64_t headroom) const
{
    if (headroom < 0)
        return -1;
    if (headroom >= m_highest)
        return m_highest;
    const std::int64_t down = headroom / m_slot * m_slot;
    return m_rounding == Rounding::Up && down < headroom ? down + m_slot : down;
}

ScheduleSearch::Entry &ScheduleSearch::entry(Table table, std::size_t first, std::size_t second, std::int64_t headroom)
{
    // 2 bits of table, 20 of layer pair (at most 48·49/2), 42 of slot.
    const std::size_t row = table == Table::Top ? first : second * (second + 1) / 2 + first;
    const auto key = static_cast<std::uint64_t>(table) << 62 | static_cast<std::uint64_t>(row) << 42
                     | static_cast<std::uint64_t>(headroom / m_slot);
    return m_memo[key];
}

std::int64_t ScheduleSearch::saving(std::size_t a, std::size_t b) const
{
    return kept(a, b) + m_model.layers[b].savingBytes;
}

std::optional<CheckpointSchedule> ScheduleSearch::cheapestWithin(std::int64_t budget, std::optional<std::int64_t> *runnerUp)
{
    if (m_n == 0 || !fits(m_model.forwardPeakBytes.front(), budget) || !fits(m_model.gapPeakBytes.front(), budget)
        || top(0, budget) >= kInfinite)
        return std::nullopt;
    if (runnerUp) {
        const std::int64_t second = entry(Table::Top, 0, 0, slotted(budget)).second;
        *runnerUp = second < kInfinite ? std::optional<std::int64_t>(second) : std::nullopt;
    }
    CheckpointSchedule schedule;
    rebuildTop(0, budget, schedule);
    return schedule;
}

std::int64_t ScheduleSearch::top(std::size_t q, std::int64_t headroom)
{
    headroom = slotted(headroom);
    if (headroom < 0)
        return kInfinite;
    if (q == m_n)
        return 0;
    Entry &memo = entry(Table::Top, q, 0, headroom);
    if (memo.cost >= 0)
        return memo.cost;
    const auto &forward = m_model.forwardPeakBytes;
    const auto &gap = m_model.gapPeakBytes;
    Entry best{kInfinite, -1};
    // Layer q plainly: its backward and the boundary after it with what is freed so far.
    if (fits(m_model.layers[q].backwardLevelPeakBytes, headroom) && fits(forward[q + 1], headroom) && fits(gap[q + 1], headroom))
        best.cost = top(q + 1, headroom);
    const auto offer = [&](std::int64_t cost, std::int32_t choice) {
        if (cost < best.cost) {
            best.second = best.cost;
            best.cost = cost;
            best.choice = choice;
        } else {
            best.second = std::min(best.second, cost);
        }
    };
    // A unit q..j: its forward frees as it goes, its recompute and backward must fit.
    std::int64_t forwardNeed = INT64_MIN;
    for (std::size_t j = q; j < m_n; ++j) {
        if (j > q)
            forwardNeed = std::max(forwardNeed, orNone(forward[j], -(kept(q, j - 1) + m_model.layers[j - 1].savingBytes)));
        if (!fits(forwardNeed, headroom))
            break;
        const std::int64_t inner = unit(q, j, headroom);
        if (inner >= kInfinite)
            continue;
        const std::int64_t after = headroom + saving(q, j);
        if (!fits(forward[j + 1], after) || !fits(gap[j + 1], after))
            continue;
        offer(inner + top(j + 1, after), static_cast<std::int32_t>(j));
    }
    Entry &stored = entry(Table::Top, q, 0, headroom);
    stored = best;
    return best.cost;
}

std::int64_t ScheduleSearch::unit(std::size_t a, std::size_t b, std::int64_t headroom)
{
    headroom = slotted(headroom);
    if (headroom < 0)
        return kInfinite;
    Entry &memo = entry(Table::Unit, a, b, headroom);
    if (memo.cost >= 0)
        return memo.cost;
    Entry result{kInfinite, -1};
    const ChainLayer &last = m_model.layers[b];
    if (a == b) {
        if (fits(last.recomputePeakBytes, headroom) && fits(last.backwardPeakBytes, headroom))
            result.cost = last.recomputeNs;
    } else {
        const Entry inner = choose(b, a, headroom, true);
        result = {inner.cost >= kInfinite ? kInfinite : recompute(a, b) + inner.cost, inner.choice};
    }
    entry(Table::Unit, a, b, headroom) = result;
    return result.cost;
}

std::int64_t ScheduleSearch::rest(std::size_t b, std::size_t q, std::int64_t headroom)
{
    headroom = slotted(headroom);
    if (headroom < 0)
        return kInfinite;
    Entry &memo = entry(Table::Rest, q, b, headroom);
    if (memo.cost >= 0)
        return memo.cost;
    const Entry result = choose(b, q, headroom, false);
    entry(Table::Rest, q, b, headroom) = result;
    return result.cost;
}

ScheduleSearch::Entry ScheduleSearch::choose(std::size_t b, std::size_t q, std::int64_t headroom, bool first)
{
    const auto &layers = m_model.layers;
    const auto &gap = m_model.gapPeakBytes;
    const std::int64_t held = layers[b].heldInBackwardBytes;
    // The recompute's level as layer k's forward runs: the level before it, the unit's
    // layers before k kept, k's own rise, and the input it reads.
    const auto recomputeLevel = [&](std::size_t k, bool unitsFirst) {
        std::int64_t level = layers[b].levelBeforeRecomputeBytes - kept(k, b) + layers[k].forwardRiseBytes;
        if (!unitsFirst)
            level += layers[k - 1].retainedBytes - layers[k - 1].keptBytes;
        return level;
    };
    Entry best{kInfinite, -1};
    const std::int64_t spike = recomputeLevel(q, first);
    if (!fits(spike, headroom))
        return best;
    // Layer q recomputed and kept for its backward.
    if (q == b) {
        if (fits(layers[b].backwardPeakBytes, headroom))
            best.cost = 0;
        return best;
    }
    if (fits(orNone(layers[q].backwardLevelPeakBytes, held), headroom) && fits(orNone(gap[q + 1], held), headroom))
        best.cost = rest(b, q + 1, headroom);
    // An inner unit q..r, run again without keeping anything in the recompute.
    std::int64_t innerSpike = spike;
    for (std::size_t r = q; r < b; ++r) {
        if (r > q)
            innerSpike = std::max(innerSpike, recomputeLevel(r, false) - (kept(q, r - 1) + layers[r - 1].savingBytes));
        if (!fits(innerSpike, headroom))
            break;
        const std::int64_t inner = unit(q, r, headroom - held);
        if (inner >= kInfinite)
            continue;
        const std::int64_t after = headroom + saving(q, r);
        if (!fits(orNone(gap[r + 1], held), after))
            continue;
        const std::int64_t cost = inner + rest(b, r + 1, after);
        if (cost < best.cost)
            best = {cost, static_cast<std::int32_t>(r)};
    }
    return best;
}

void ScheduleSearch::rebuildTop(std::size_t q, std::int64_t headroom, CheckpointSchedule &out)
{
    while (q < m_n) {
        headroom = slotted(headroom);
        const Entry &chosen = entry(Table::Top, q, 0, headroom);
        if (chosen.choice < 0) {
            ++q;
            continue;
        }
        const auto j = static_cast<std::size_t>(chosen.choice);
        CheckpointUnit unitOut{q, j, {}};
        rebuildUnit(q, j, headroom, unitOut);
        out.push_back(std::move(unitOut));
        headroom += saving(q, j);
        q = j + 1;
    }
}

void ScheduleSearch::rebuildUnit(std::size_t a, std::size_t b, std::int64_t headroom, CheckpointUnit &out)
{
    headroom = slotted(headroom);
    if (a == b)
        return;
    const std::int64_t held = m_model.layers[b].heldInBackwardBytes;
    std::int32_t choice = entry(Table::Unit, a, b, headroom).choice;
    std::size_t q = a;
    while (q < b) {
        if (choice < 0) {
            ++q;
        } else {
            const auto r = static_cast<std::size_t>(choice);
            CheckpointUnit inner{q, r, {}};
            rebuildUnit(q, r, headroom - held, inner);
            out.inner.push_back(std::move(inner));
            headroom = slotted(headroom + saving(q, r));
            q = r + 1;
        }
        if (q < b)
            choice = entry(Table::Rest, q, b, headroom).choice;
    }
}

} // namespace peaklens
