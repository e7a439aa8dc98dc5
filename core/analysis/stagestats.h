// SPDX-License-Identifier: Apache-2.0
#pragma once
// The stages of a trace (range.h: profiler annotations, a snapshot's external_annotations)
// by name: how often and how long each ran, and the most memory one device held in any
// of its spans, so a summary can say which stage the memory peaks in.

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct StageStats
{
    std::string name;
    std::int64_t spans = 0;
    std::int64_t totalNs = 0;
    std::int64_t highestBytes = 0; // allocated on the device, at any time within a span
    bool holdsPeak = false;        // a span is open at the device's peak
    bool operator==(const StageStats &) const = default;
};

// Per stage name, highest first, then by name. `peakTimeNs`: when the device peaked, if it did.
std::vector<StageStats> stageStats(const Trace &trace, Device device, std::optional<std::int64_t> peakTimeNs);

} // namespace peaklens
