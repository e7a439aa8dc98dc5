// SPDX-License-Identifier: Apache-2.0
#pragma once
// The "[memory]" events of a Kineto trace put in time order per device before anything is
// derived from them: a multi-threaded trace lists them grouped by thread, not by time.
// The running sum is checked against the trace's own "Total Allocated" at every event;
// where they disagree the file's totals win, and the disagreement is counted. Reserved
// memory comes from "Total Reserved" in time order.

#include "categoryledger.h"
#include "core/trace/memoryevents.h"
#include "core/trace/reservedevent.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace peaklens {

class KinetoMemory
{
public:
    static constexpr std::int64_t kAbsent = -1; // a total the event does not carry

    struct Record
    {
        std::int64_t timeNs = 0;
        std::int64_t eventIndex = kAbsent; // "Ev Idx": the profiler's order among equal times
        std::int32_t thread = 0;
        std::uint32_t lane = 0;
        std::uint64_t addr = 0;
        bool hasAddress = true;
        std::int64_t bytes = 0;
        std::int64_t totalAllocated = kAbsent;
        std::int64_t totalReserved = kAbsent;
    };

    // Where an event's memory comes from: an event of the trace, or the trace's totals.
    enum class Origin : std::uint8_t {
        Recorded,    // a "[memory]" event, on its thread
        BeforeTrace, // allocated before profiling began
        Totals,      // in "Total Allocated" but in no event: the file's totals win
    };

    struct ThreadEvent
    {
        MemoryEvent event;
        std::int32_t thread = 0; // for Recorded events
        Origin origin = Origin::Recorded;
    };

    // Per device lane: how the running sum compared with the trace's own totals.
    struct TotalsCheck
    {
        std::int64_t checked = 0; // events that carry "Total Allocated"
        std::int64_t events = 0;  // of those, events whose running sum differed
        std::int64_t bytes = 0;   // the sum of the differences' sizes
        std::int64_t largest = 0; // the largest single difference
    };

    struct Result
    {
        std::vector<ThreadEvent> events; // per lane in time order, lanes one after another
        std::vector<ReservedEvent> reserved;
        std::map<std::uint32_t, TotalsCheck> totals;
        std::map<std::uint32_t, std::int64_t> preexistingBytes; // allocated before profiling began
        bool addressesMissing = false;                          // old traces: blocks are paired newest first
    };

    void add(const Record &record) { m_records.push_back(record); }
    // When the trace begins (its first event of any kind): memory from before profiling is
    // there from then on. Without it, from the first memory event.
    void setTraceBegin(std::int64_t timeNs) { m_earliestNs = std::min(m_earliestNs, timeNs); }
    Result finish();

private:
    void finishLane(std::span<const Record> records, Result &result);

    std::vector<Record> m_records;
    std::int64_t m_earliestNs = INT64_MAX;
};

} // namespace peaklens
