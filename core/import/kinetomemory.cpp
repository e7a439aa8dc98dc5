// SPDX-License-Identifier: Apache-2.0
#include "kinetomemory.h"

#include <algorithm>

namespace peaklens {

KinetoMemory::Result KinetoMemory::finish()
{
    // Ties in time keep the profiler's own order ("Ev Idx"), then the file's. Traces of one
    // device mostly list their events in that order already.
    const auto before = [](const Record &a, const Record &b) {
        if (a.lane != b.lane)
            return a.lane < b.lane;
        if (a.timeNs != b.timeNs)
            return a.timeNs < b.timeNs;
        return a.eventIndex != kAbsent && b.eventIndex != kAbsent && a.eventIndex < b.eventIndex;
    };
    if (!std::is_sorted(m_records.begin(), m_records.end(), before))
        std::stable_sort(m_records.begin(), m_records.end(), before);
    Result result;
    result.events.reserve(m_records.size());
    // Memory from before profiling is there from the trace's first event on, on every device.
    for (const Record &record : m_records)
        m_earliestNs = std::min(m_earliestNs, record.timeNs);
    for (std::size_t begin = 0; begin < m_records.size();) {
        std::size_t end = begin;
        while (end < m_records.size() && m_records[end].lane == m_records[begin].lane)
            ++end;
        finishLane(std::span<const Record>(m_records).subspan(begin, end - begin), result);
        begin = end;
    }
    m_records.clear();
    return result;
}

void KinetoMemory::finishLane(std::span<const Record> records, Result &result)
{
    const std::uint32_t lane = records.front().lane;
    // Memory allocated before profiling began: what the first total holds beyond the events
    // before it; without totals, as much as keeps the running sum from going below zero.
    std::int64_t running = 0, lowest = 0, preexisting = -1;
    for (const Record &record : records) {
        running += record.bytes;
        lowest = std::min(lowest, running);
        if (preexisting < 0 && record.totalAllocated != kAbsent)
            preexisting = std::max<std::int64_t>(0, record.totalAllocated - running);
    }
    if (preexisting < 0)
        preexisting = -lowest;

    // Synthetic blocks: memory from before profiling, corrections to the file's totals,
    // and the blocks of old traces that name no address.
    CategoryLedger ledger(lane);
    std::vector<MemoryEvent> scratch;
    std::int64_t level = 0;
    const auto addSynthetic = [&](const Record &record, std::int64_t delta, Origin origin) {
        scratch.clear();
        ledger.apply(record.timeNs, origin == Origin::BeforeTrace ? Category::BeforeTrace : Category::Unknown, delta, scratch);
        for (const MemoryEvent &event : scratch)
            result.events.push_back({event, record.thread, origin});
        level += delta;
    };
    if (preexisting > 0) {
        Record first = records.front();
        first.timeNs = m_earliestNs;
        addSynthetic(first, preexisting, Origin::BeforeTrace);
        result.preexistingBytes[lane] = preexisting;
    }
    TotalsCheck check;
    std::int64_t reserved = 0;
    for (const Record &record : records) {
        std::int64_t correction = 0;
        if (record.totalAllocated != kAbsent) {
            ++check.checked;
            correction = record.totalAllocated - (level + record.bytes);
            if (correction != 0) {
                ++check.events;
                check.bytes += std::abs(correction);
                check.largest = std::max(check.largest, std::abs(correction));
            }
        }
        // A lowering correction before the event and a raising one after it, so that no
        // moment stands higher than the file's totals on either side.
        if (correction < 0)
            addSynthetic(record, correction, Origin::Totals);
        if (!record.hasAddress) {
            result.addressesMissing = true;
            addSynthetic(record, record.bytes, Origin::Recorded);
        } else if (record.bytes != 0) {
            result.events.push_back(
                {MemoryEvent{record.timeNs, record.bytes, record.addr, lane}, record.thread, Origin::Recorded});
            level += record.bytes;
        }
        if (correction > 0)
            addSynthetic(record, correction, Origin::Totals);
        if (record.totalReserved != kAbsent && record.totalReserved != reserved) {
            result.reserved.push_back(ReservedEvent{record.timeNs, record.totalReserved - reserved, 0, lane});
            reserved = record.totalReserved;
        }
    }
    if (check.checked > 0)
        result.totals[lane] = check;
}

} // namespace peaklens
