// SPDX-License-Identifier: Apache-2.0
#include "timelineseries.h"

#include "lanedevices.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace peaklens {

namespace {

// Appends a point, merging it into the last one when they share a time.
void appendPoint(std::vector<SeriesPoint> &points, std::int64_t timeNs, std::int64_t bytes)
{
    if (!points.empty() && points.back().timeNs == timeNs)
        points.back().bytes = bytes;
    else
        points.push_back({timeNs, bytes});
}

} // namespace

std::uint32_t groupKeyOfLane(const Trace &trace, std::uint32_t lane, GroupBy groupBy)
{
    if (groupBy != GroupBy::Pool && groupBy != GroupBy::Stream)
        return lane;
    const Lane &of = trace.lanes[lane];
    for (std::uint32_t l = 0; l < lane; ++l) {
        const Lane &other = trace.lanes[l];
        if (other.device == of.device && (groupBy == GroupBy::Pool ? other.pool == of.pool : other.stream == of.stream))
            return l;
    }
    return lane;
}

std::string poolLabel(const MemoryPool &pool)
{
    return pool.isDefault() ? "default pool" : pool.toString();
}

std::string streamLabel(std::uint64_t stream)
{
    if (stream < 0x10000)
        return "stream " + std::to_string(stream);
    char hex[24];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(stream));
    return std::string("stream ") + hex;
}

bool groupsLanes(const Trace &trace, Device device, GroupBy groupBy)
{
    std::optional<std::uint32_t> first;
    for (std::uint32_t l = 0; l < trace.lanes.size(); ++l) {
        if (trace.lanes[l].device != device)
            continue;
        const std::uint32_t key = groupKeyOfLane(trace, l, groupBy);
        if (first && key != *first)
            return true;
        first = first.value_or(key);
    }
    return false;
}

std::uint32_t layerAtDepth(const Trace &trace, std::uint32_t layer, int depth)
{
    if (layer == kNoLayer || depth <= 0)
        return layer;
    std::vector<std::uint32_t> chain;
    for (std::uint32_t l = layer; l != kNoLayer; l = trace.layers[l].parent)
        chain.push_back(l);
    return chain.size() >= static_cast<std::size_t>(depth) ? chain[chain.size() - static_cast<std::size_t>(depth)] : layer;
}

void TimelineGrouping::add(std::uint64_t addr, std::int64_t deltaBytes, std::int64_t timeNs, std::uint32_t key)
{
    if (deltaBytes > 0) {
        m_owners.insertOrAssign(addr, key);
    } else if (std::uint32_t *owner = m_owners.find(addr)) {
        key = *owner;
        m_owners.erase(owner);
    }
    Group &group = m_groups[key];
    group.bytes += deltaBytes;
    group.peak = std::max(group.peak, group.bytes);
    if (group.newest && group.newest->timeNs != timeNs)
        group.points.push_back(*group.newest);
    group.newest = SeriesPoint{timeNs, group.bytes};
}

std::vector<GroupSeries> TimelineGrouping::series(const Trace &trace, GroupBy groupBy, const Labels &labels)
{
    std::vector<std::pair<std::int64_t, std::uint32_t>> order;
    for (auto &[key, group] : m_groups) {
        if (group.newest)
            group.points.push_back(*std::exchange(group.newest, std::nullopt));
        order.emplace_back(group.peak, key);
    }
    std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::vector<GroupSeries> series;
    for (const auto &[peak, key] : order) {
        GroupSeries group;
        group.key = key;
        if (groupBy == GroupBy::Category)
            group.label = std::string(categoryName(static_cast<Category>(key)));
        else if (groupBy == GroupBy::Layer)
            group.label = key == kNoLayer ? std::string("(no layer)") : trace.layers[key].path;
        else
            group.label = labels ? labels(key) : std::to_string(key);
        group.points = m_groups[key].points;
        series.push_back(std::move(group));
    }
    return series;
}

TimelineSeries buildTimeline(const Trace &trace, Device device, GroupBy groupBy, int layerDepth)
{
    TimelineSeries totals;
    totals.device = device;
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    if (!deviceIndex)
        return totals;
    const MemoryEvents &events = trace.events;
    // Reserved at once for every event of the device, so the series is never copied to grow
    // (a copy of 10M points would hold 320 MB for a moment).
    std::size_t deviceEvents = 0;
    for (std::size_t i = 0; i < events.size(); ++i)
        deviceEvents += lanes.deviceOfLane[events.lane(i)] == *deviceIndex;
    totals.allocated.reserve(deviceEvents);
    std::int64_t total = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != *deviceIndex)
            continue;
        total += events.deltaBytes(i);
        totals.allocated.append(events.timeNs(i), total);
    }
    std::int64_t reservedBytes = 0;
    for (const ReservedEvent &event : trace.reserved) {
        if (lanes.deviceOfLane[event.lane] != *deviceIndex)
            continue;
        reservedBytes += event.deltaBytes;
        totals.reserved.append(event.timeNs, reservedBytes);
    }
    return regroupTimeline(trace, totals, groupBy, layerDepth);
}

TimelineSeries regroupTimeline(const Trace &trace, const TimelineSeries &timeline, GroupBy groupBy, int layerDepth)
{
    TimelineSeries series;
    series.device = timeline.device;
    series.allocated = timeline.allocated;
    series.reserved = timeline.reserved;
    series.groupBy = groupBy;
    series.layerDepth = layerDepth;
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(series.device);
    if (!deviceIndex)
        return series;

    std::vector<std::uint32_t> groupOfLayer(trace.layers.size());
    for (std::uint32_t l = 0; l < groupOfLayer.size(); ++l)
        groupOfLayer[l] = layerAtDepth(trace, l, layerDepth);

    const bool byLane = groupBy == GroupBy::Pool || groupBy == GroupBy::Stream;
    std::vector<std::uint32_t> groupOfLane(trace.lanes.size());
    for (std::uint32_t l = 0; l < groupOfLane.size(); ++l)
        groupOfLane[l] = groupKeyOfLane(trace, l, groupBy);
    const auto label = [&](std::uint32_t key) {
        return groupBy == GroupBy::Pool ? poolLabel(trace.lanes[key].pool) : streamLabel(trace.lanes[key].stream);
    };

    TimelineGrouping grouping;
    const MemoryEvents &events = trace.events;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != *deviceIndex)
            continue;
        std::uint32_t key = static_cast<std::uint32_t>(events.category(i));
        if (groupBy == GroupBy::Layer)
            key = events.layer(i) == kNoLayer ? kNoLayer : groupOfLayer[events.layer(i)];
        else if (byLane)
            key = groupOfLane[events.lane(i)];
        grouping.add(events.addr(i), events.deltaBytes(i), events.timeNs(i), key);
    }
    series.groups = grouping.series(trace, groupBy, label);
    if (!byLane)
        return series;

    // A segment is reserved and released on its own lane: its pool's and stream's.
    std::map<std::uint32_t, std::vector<SeriesPoint>> reserved;
    std::map<std::uint32_t, std::int64_t> reservedBytes;
    for (const ReservedEvent &event : trace.reserved) {
        if (lanes.deviceOfLane[event.lane] != *deviceIndex)
            continue;
        const std::uint32_t key = groupOfLane[event.lane];
        appendPoint(reserved[key], event.timeNs, reservedBytes[key] += event.deltaBytes);
    }
    for (const GroupSeries &group : series.groups) {
        if (auto it = reserved.find(group.key); it != reserved.end()) {
            series.reservedGroups.push_back({group.key, group.label, std::move(it->second)});
            reserved.erase(it);
        }
    }
    for (auto &[key, points] : reserved)
        series.reservedGroups.push_back({key, label(key), std::move(points)});
    return series;
}

std::vector<SeriesPoint> layerMemory(const Trace &trace, Device device, std::uint32_t layer)
{
    std::vector<bool> within(trace.layers.size());
    for (std::uint32_t l = 0; l < within.size(); ++l)
        within[l] = trace.isWithin(l, layer);
    return selectedMemory(trace, device, [&](std::size_t i) {
        const std::uint32_t owner = trace.events.layer(i);
        return owner != kNoLayer && within[owner];
    });
}

std::vector<SeriesPoint> selectedMemory(const Trace &trace, Device device, const std::function<bool(std::size_t)> &select)
{
    std::vector<SeriesPoint> out;
    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    if (!deviceIndex)
        return out;
    const MemoryEvents &events = trace.events;
    std::unordered_map<std::uint64_t, std::int64_t> blocks; // the selected live blocks
    std::int64_t bytes = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != *deviceIndex)
            continue;
        const std::int64_t before = bytes;
        // A free ends the selected block; an allocation at its address ends one never freed.
        if (auto block = blocks.find(events.addr(i)); block != blocks.end()) {
            bytes -= block->second;
            blocks.erase(block);
        }
        if (events.deltaBytes(i) > 0 && select(i)) {
            blocks[events.addr(i)] = events.deltaBytes(i);
            bytes += events.deltaBytes(i);
        }
        if (bytes != before)
            appendPoint(out, events.timeNs(i), bytes);
    }
    return out;
}

int blockDepth(const Trace &trace, const std::vector<std::uint32_t> &chain)
{
    if (chain.empty())
        return 0;
    int depth = 0;
    for (std::uint32_t l = chain.front(); l != kNoLayer; l = trace.layers[l].parent)
        ++depth;
    return depth;
}

} // namespace peaklens
