// SPDX-License-Identifier: Apache-2.0
#pragma once
// One recorded training run in memory: events, layers, ranges, steps, kernels, stacks
// and metadata. Built by TraceBuilder, then shared immutable as std::shared_ptr<const Trace>.

#include "device.h"
#include "kernel.h"
#include "layer.h"
#include "marker.h"
#include "memoryevents.h"
#include "range.h"
#include "reservedevent.h"
#include "stacktable.h"
#include "step.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct Trace
{
    std::map<std::string, std::string, std::less<>> meta;
    std::vector<Lane> lanes;
    MemoryEvents events;                 // sorted by time
    std::vector<ReservedEvent> reserved; // sorted by time
    std::vector<Layer> layers;           // a parent comes before its children
    std::vector<Range> ranges;           // sorted by begin time
    std::vector<std::string> stageNames; // of the ranges that are stages
    std::vector<Step> steps;             // sorted by begin time
    std::vector<Kernel> kernels;         // sorted by begin time
    std::vector<std::string> kernelNames;
    std::vector<Marker> markers; // sorted by time
    StackTable stacks;

    bool operator==(const Trace &) const = default;

    std::string metaValue(std::string_view key) const;
    // Devices that have memory events or reserved events, in order.
    std::vector<Device> devices() const;
    // The index into steps of the step whose span holds the time.
    std::optional<std::size_t> stepAt(std::int64_t timeNs) const;
    std::optional<std::uint32_t> findLayer(std::string_view path) const;
    // True when `layer` is `ancestor` or lies below it in the module tree.
    bool isWithin(std::uint32_t layer, std::uint32_t ancestor) const;
};

using TracePtr = std::shared_ptr<const Trace>;

} // namespace peaklens
