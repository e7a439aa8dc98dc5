#include "spantrace.h"

#include <map>

namespace peaklens {

std::vector<ReservedEvent> reservedInWindow(const std::vector<ReservedEvent> &reserved, std::int64_t beginNs,
                                            std::int64_t endNs)
{
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> before;
    std::vector<ReservedEvent> kept;
    for (const ReservedEvent &event : reserved) {
        if (event.timeNs < beginNs)
            before[{event.lane, event.addr}] += event.deltaBytes;
        else if (event.timeNs <= endNs)
            kept.push_back(event);
    }
    std::vector<ReservedEvent> window;
    for (const auto &[key, bytes] : before) {
        if (bytes != 0)
            window.push_back(ReservedEvent{beginNs, bytes, key.second, key.first});
    }
    window.insert(window.end(), kept.begin(), kept.end());
    return window;
}

MemoryEvents carriedThen(const std::vector<LiveBlocks::Block> &carried, std::int64_t beginNs, const MemoryEvents &events,
                         std::size_t begin, std::size_t end)
{
    MemoryEvents result;
    result.reserve(carried.size() + (end - begin));
    for (const LiveBlocks::Block &block : carried) {
        result.append(MemoryEvent{beginNs, block.bytes, block.addr, block.lane, block.layer, block.stack, block.category,
                                  block.phase});
    }
    result.append(events, begin, end);
    return result;
}

std::shared_ptr<Trace> spanTrace(const Trace &tables, MemoryEvents events, std::int64_t beginNs, std::int64_t endNs)
{
    auto result = std::make_shared<Trace>();
    result->meta = tables.meta;
    result->lanes = tables.lanes;
    result->layers = tables.layers;
    result->kernelNames = tables.kernelNames;
    result->stacks = tables.stacks;
    result->events = std::move(events);
    result->reserved = reservedInWindow(tables.reserved, beginNs, endNs);
    result->ranges = overlapping(tables.ranges, beginNs, endNs, [](const Range &r) { return std::pair(r.beginNs, r.endNs); });
    result->steps = overlapping(tables.steps, beginNs, endNs, [](const Step &s) { return std::pair(s.beginNs, s.endNs); });
    result->kernels = overlapping(tables.kernels, beginNs, endNs, [](const Kernel &k) { return std::pair(k.beginNs, k.endNs); });
    result->markers = overlapping(tables.markers, beginNs, endNs, [](const Marker &m) { return std::pair(m.timeNs, m.timeNs); });
    return result;
}

} // namespace peaklens
