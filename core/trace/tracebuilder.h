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

    TraceBuilder();

    void setMeta(std::string_view key, std::string value);
    std::uint32_t lane(const Lane &lane);

    // The layer with this module path, created (with its ancestors) if new.
    std::uint32_t layer(std::string_view path);
    void setLayerInfo(std::uint32_t layer, std::string kind, std::int64_t parameterBytes);

    StackTable &stacks() { return m_trace->stacks; }
    std::uint32_t kernelName(std::string_view name);

    void reserveEvents(std::size_t count) { m_trace->events.reserve(count); }
    // Throws peaklens::Error when an index is out of range.
    void addEvent(const MemoryEvent &event);
    void addReserved(const ReservedEvent &event);
    void addRange(const Range &range);
    // For ranges added when they begin, before their end is known.
    void endRange(std::size_t index, std::int64_t endNs);
    void addStep(const Step &step);
    void addKernel(const Kernel &kernel);
    void addMarker(const Marker &marker);

    const Trace &current() const { return *m_trace; }
    // Sorts events, ranges, steps and kernels by time; the builder is empty afterwards.
    std::shared_ptr<const Trace> finish();

private:
    void checkLane(std::uint32_t lane) const;
    void checkSize(std::int64_t deltaBytes) const;

    std::unique_ptr<Trace> m_trace;
    std::map<std::string, std::uint32_t, std::less<>> m_layerIds;
    std::map<Lane, std::uint32_t> m_laneIds;
    std::map<std::string, std::uint32_t, std::less<>> m_kernelNameIds;
};

} // namespace peaklens
