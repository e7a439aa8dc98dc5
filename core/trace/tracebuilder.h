// SPDX-License-Identifier: Apache-2.0
#pragma once
// Assembles a Trace from importers, the native reader and trace text: interns lanes and
// layer paths, checks every index, and sorts what must be sorted when finished.

#include "trace.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace peaklens {

class TraceBuilder
{
public:
    // 256 TiB: larger events are damage, and refusing them keeps every sum far from overflow.
    static constexpr std::int64_t kMaxEventBytes = std::int64_t(1) << 48;
    // Model trees are a few dozen modules deep; far deeper paths are damage.
    static constexpr std::size_t kMaxLayerDepth = 1024;
    // and far longer ones: each ancestor's path is kept in full, so length times depth adds up.
    static constexpr std::size_t kMaxLayerPathBytes = 4096;
    // 2^53 ns, 104 days: a trace whose times span more is damage, and refusing it keeps every
    // duration, and every sum of them, far from overflow.
    static constexpr std::int64_t kMaxSpanNs = std::int64_t(1) << 53;

    TraceBuilder();

    void setMeta(std::string_view key, std::string_view value);
    std::uint32_t lane(const Lane &lane);

    // The layer with this module path, created (with its ancestors) if new. Names are
    // stored as visibleText shows them, metadata values as visibleLines does.
    std::uint32_t layer(std::string_view path);
    void setLayerInfo(std::uint32_t layer, std::string_view kind, std::int64_t parameterBytes);

    StackTable &stacks() { return m_trace->stacks; }
    std::uint32_t kernelName(std::string_view name);
    std::uint32_t stageName(std::string_view name);

    void reserveEvents(std::size_t count);
    // Throws peaklens::Error when an index is out of range.
    void addEvent(const MemoryEvent &event);
    // For bulk decoders: `count` more events, to be filled in before finish(). The caller
    // has checked every lane, layer and stack index and every size as addEvent would.
    MemoryEvents::Slots appendEvents(std::size_t count);
    void addReserved(const ReservedEvent &event);
    void addRange(const Range &range);
    // For ranges added when they begin, before their end is known.
    void endRange(std::size_t index, std::int64_t endNs);
    void addStep(const Step &step);
    void addKernel(const Kernel &kernel);
    void addMarker(const Marker &marker);

    const Trace &current() const { return *m_trace; }
    // For a reader following a file as it is written: moves out the events, reserved
    // events, ranges, steps, kernels and markers added since the last call, as added
    // (unsorted); metadata, lanes, layers, stacks, kernel and stage names stay for later rows.
    Trace takeAdded();
    // Sorts events, ranges, steps and kernels by time; the builder is empty afterwards.
    std::shared_ptr<const Trace> finish();

private:
    // What the trace holds is charged to the load's LoadBudget: per event its columns and a
    // sorting permutation, per named thing its text twice (the item and its index).
    static constexpr std::size_t kEventBytes = 48;
    static constexpr std::size_t kEntryBytes = 48;
    static constexpr std::size_t kChargeStep = 65536;
    void checkLane(std::uint32_t lane) const;
    void checkSize(std::int64_t deltaBytes) const;
    void checkSpan() const;
    static void growTo(std::size_t &charged, std::size_t count, std::size_t itemBytes, std::string_view what);

    std::unique_ptr<Trace> m_trace;
    std::map<std::string, std::uint32_t, std::less<>> m_layerIds;
    std::map<Lane, std::uint32_t> m_laneIds;
    std::map<std::string, std::uint32_t, std::less<>> m_kernelNameIds;
    std::map<std::string, std::uint32_t, std::less<>> m_stageNameIds;
    std::size_t m_chargedEvents = 0, m_chargedOther = 0, m_otherCount = 0;
};

} // namespace peaklens
