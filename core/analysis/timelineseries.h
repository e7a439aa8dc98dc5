// SPDX-License-Identifier: Apache-2.0
#pragma once
// Allocated (and reserved) bytes over time on one device, in total and split into groups
// by category, layer, memory pool or stream, as step functions: each point holds from its
// time until the next.
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
    // The category's code; the layer's index (kNoLayer for events outside any layer); for a
    // pool or a stream, the index of the device's first lane in it (groupKeyOfLane).
    std::uint32_t key = 0;
    std::string label;
    PackedSeries points; // only where this group changes; valueAt(points, t) reads it
};

enum class GroupBy { Category, Layer, Pool, Stream };

// The reserved bytes of one pool or stream over time: what its segments hold.
struct ReservedGroup
{
    std::uint32_t key = 0; // as GroupSeries::key
    std::string label;
    std::vector<SeriesPoint> points;
};

struct TimelineSeries
{
    Device device;
    SharedPoints allocated;          // one point per event time
    SharedPoints reserved;           // empty when the trace has no segments
    std::vector<GroupSeries> groups; // largest peak first
    // Grouped by pool or stream: each group's reserved bytes, in the order of `groups` (a
    // pool that reserved but never allocated last); empty in the other groupings.
    std::vector<ReservedGroup> reservedGroups;
    GroupBy groupBy = GroupBy::Category;
    int layerDepth = 0; // see buildTimeline
};

// The groups of a timeline, built an event at a time: a block stays in the group of the
// event that allocated it until it is freed, whatever runs when the free comes.
class TimelineGrouping
{
public:
    void add(std::uint64_t addr, std::int64_t deltaBytes, std::int64_t timeNs, std::uint32_t key);
    // The labels a grouping gives its keys, beside those of categories and layers.
    using Labels = std::function<std::string(std::uint32_t key)>;
    // The groups so far, largest peak first; their points are shared, and never changed
    // once handed on: a later event at the time of a group's newest point adds a point.
    std::vector<GroupSeries> series(const Trace &trace, GroupBy groupBy, const Labels &labels = {});

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

// The key of a lane's group when grouped by pool or by stream: the index of the first lane
// of the same device in the same pool (or on the same stream). Other groupings: the lane.
std::uint32_t groupKeyOfLane(const Trace &trace, std::uint32_t lane, GroupBy groupBy);
// "default pool", "graph pool 1", "MemPool 2"; "stream 0", "stream 0x7f3a…" (as hex when large).
std::string poolLabel(const MemoryPool &pool);
std::string streamLabel(std::uint64_t stream);
// Whether the device's lanes are in more than one pool, or on more than one stream: a
// grouping by pool or by stream tells something.
bool groupsLanes(const Trace &trace, Device device, GroupBy groupBy);

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
