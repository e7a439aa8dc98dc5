// SPDX-License-Identifier: Apache-2.0
#pragma once
// Allocated (and reserved) bytes over time on one device, in total and split into groups
// by category or by layer, as step functions: each point holds from its time until the next.
// The totals are shared between the groupings of one trace; the groups, together as many
// points as the totals, are packed.

#include "core/trace/addressmap.h"
#include "core/trace/trace.h"
#include "packedseries.h"
#include "seriespoint.h"
#include "sharedpoints.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct GroupSeries
{
    std::uint32_t key = 0; // category code, or layer index (kNoLayer for events outside any layer)
    std::string label;
    PackedSeries points; // only where this group changes; valueAt(points, t) reads it
};

enum class GroupBy { Category, Layer };

struct TimelineSeries
{
    Device device;
    SharedPoints allocated;          // one point per event time
    SharedPoints reserved;           // empty when the trace has no segments
    std::vector<GroupSeries> groups; // largest peak first
    GroupBy groupBy = GroupBy::Category;
    int layerDepth = 0; // see buildTimeline
};

// The groups of a timeline, built an event at a time: a block stays in the group of the
// event that allocated it until it is freed, whatever runs when the free comes.
class TimelineGrouping
{
public:
    void add(std::uint64_t addr, std::int64_t deltaBytes, std::int64_t timeNs, std::uint32_t key);
    // The groups so far, largest peak first; their points are shared, and never changed
    // once handed on: a later event at the time of a group's newest point adds a point.
    std::vector<GroupSeries> series(const Trace &trace, GroupBy groupBy);

private:
    struct Group
    {
        std::int64_t bytes = 0;
        std::int64_t peak = 0;
        std::optional<SeriesPoint> newest; // held back while events at its time may change it
        PackedSeries points;
    };
    std::map<std::uint32_t, Group> m_groups;
    AddressMap<std::uint32_t> m_owners; // a live block's address -> its group
};

// layerDepth, for GroupBy::Layer: 0 groups by the innermost layer of each event, N by its
// ancestor N levels below the root (1 = top-level modules such as "blocks").
TimelineSeries buildTimeline(const Trace &trace, Device device, GroupBy groupBy, int layerDepth = 0);

// The same timeline grouped another way: the device and the allocated and reserved series
// are `timeline`'s, shared rather than built again; only the groups are new.
TimelineSeries regroupTimeline(const Trace &trace, const TimelineSeries &timeline, GroupBy groupBy, int layerDepth = 0);

// The ancestor of `layer` `depth` levels below the root (the layer itself when it is not
// that deep, or for depth 0): the band a timeline grouped at that depth puts it in.
std::uint32_t layerAtDepth(const Trace &trace, std::uint32_t layer, int depth);

// The memory of a layer and all its sub-layers over time on one device: the blocks their
// allocations made, each until it is freed.
std::vector<SeriesPoint> layerMemory(const Trace &trace, Device device, std::uint32_t layer);
// The memory of the blocks whose allocating event `select` accepts (given its index), on
// one device over time, each until it is freed.
std::vector<SeriesPoint> selectedMemory(const Trace &trace, Device device, const std::function<bool(std::size_t)> &select);

// How deep the model's repeated blocks sit (1 = top-level modules), for a timeline
// grouped by layer that shows one band per block; 0 (innermost layers) without a chain.
int blockDepth(const Trace &trace, const std::vector<std::uint32_t> &chain);

} // namespace peaklens
