// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a native file shows before anything but its chunk rows is read: its levels chunk by
// chunk from the running totals its writer kept, the lowest and highest allocated bytes
// of every chunk on the device of the highest peak. Read in milliseconds, for a first
// picture of a big file while its events are read.

#include "core/analysis/seriespoint.h"
#include "core/trace/device.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct FileOverview
{
    std::uint64_t events = 0;
    Device device;              // the device with the highest peak
    std::int64_t peakBytes = 0; // its peak
    // Per chunk on that device, from its first event's time on, and where the last ends:
    // the highest and the lowest allocated bytes within it.
    std::vector<SeriesPoint> high;
    std::vector<SeriesPoint> low;
};

// Null for a file that is not native, is of format 1, has fewer than `leastEvents` events,
// has no chunk that allocates, or whose chunks were not written in time order. Throws
// ImportError as loadTrace does.
std::optional<FileOverview> readFileOverview(const std::string &path, std::uint64_t leastEvents = 0);

} // namespace peaklens
