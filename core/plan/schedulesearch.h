// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cheapest checkpoint schedule (core/plan/checkpointschedule.h) for a memory budget
// over the whole plan space: single layers, segments, and segments whose recompute
// checkpoints parts of them again (Rotor's multi-level persistent schedules). A dynamic
// programme over the chain as Rotor's is, but on this cost model's constraints, so that
// the schedule it returns fits predict() exactly. Memory is counted in slots of
// slotBytes(), and only the states the search visits are kept. Rounded down (the budget's
// favour), every check is kept: a schedule found always fits, and one that fits by less
// than a slot per unit can be missed. Rounded up, every check is relaxed: no schedule
// that fits is missed, so what it finds adds no more time than the best that fits, and
// is that best when it fits (the planner checks, and searches finer slots when not).

#include "checkpointschedule.h"
#include "costmodel.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace peaklens {

class ScheduleSearch
{
public:
    // Chains longer than this are searched per layer only (planner.h): the programme takes
    // O(N³·slots) time and O(N²·slots) memory for the slots it visits.
    static constexpr std::size_t kMostLayers = 48;

    enum class Rounding { Down, Up };
    // `slots`: memory is counted in units of the highest level the model reaches / slots.
    explicit ScheduleSearch(const CostModel &model, std::size_t slots = 1024, Rounding rounding = Rounding::Down);

    // The schedule with the least added time whose predicted peak is at most `budget`
    // (rounded as the search rounds). `runnerUp`, when given, gets the added time of the
    // cheapest schedule that fits and decides the first layer otherwise, if there is one.
    std::optional<CheckpointSchedule> cheapestWithin(std::int64_t budget, std::optional<std::int64_t> *runnerUp = nullptr);
    std::int64_t slotBytes() const { return m_slot; }
    std::size_t slots() const { return m_slots; }

private:
    struct Entry
    {
        std::int64_t cost = -1;              // -1: not computed yet
        std::int32_t choice = -1;            // -1: the layer runs plainly; else the last layer of the unit that starts here
        std::int64_t second = INT64_MAX / 4; // the cheapest other choice (top level only)
    };
    static constexpr std::int64_t kInfinite = INT64_MAX / 4;

    // The cheapest top-level items for layers q.. with `headroom` (budget plus what the
    // units before q free).
    std::int64_t top(std::size_t q, std::int64_t headroom);
    // Inside a unit ending at b, recomputed: the cheapest items for layers q..b.
    std::int64_t rest(std::size_t b, std::size_t q, std::int64_t headroom);
    // A unit a..b with its inner items: what it adds to the step (its recompute and its
    // inner units'), given the headroom its constraints have.
    std::int64_t unit(std::size_t a, std::size_t b, std::int64_t headroom);
    // The choices at q inside a unit ending at b; `first`: q is the unit's first layer.
    Entry choose(std::size_t b, std::size_t q, std::int64_t headroom, bool first);

    std::int64_t slotted(std::int64_t headroom) const;
    std::int64_t kept(std::size_t from, std::size_t to) const { return m_keptSum[to] - m_keptSum[from]; } // B over [from, to)
    std::int64_t saving(std::size_t a, std::size_t b) const;                                              // what unit a..b frees
    std::int64_t recompute(std::size_t a, std::size_t b) const { return m_timeSum[b + 1] - m_timeSum[a]; }
    bool fits(std::int64_t value, std::int64_t headroom) const { return value == INT64_MIN || value <= headroom; }

    void rebuildTop(std::size_t q, std::int64_t headroom, CheckpointSchedule &out);
    void rebuildUnit(std::size_t a, std::size_t b, std::int64_t headroom, CheckpointUnit &out);

    const CostModel &m_model;
    std::size_t m_n;
    std::size_t m_slots = 1;
    Rounding m_rounding = Rounding::Down;
    std::int64_t m_slot = 1, m_highest = 0;
    std::vector<std::int64_t> m_keptSum, m_timeSum;
    // Per table (top, rest, unit), layer or pair of layers, and headroom slot, computed
    // when first needed.
    enum class Table : std::uint64_t { Top, Rest, Unit };
    std::unordered_map<std::uint64_t, Entry> m_memo;
    Entry &entry(Table table, std::size_t first, std::size_t second, std::int64_t headroom);
};

} // namespace peaklens
