// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a native file shows before its events are read: its tables, its levels chunk by
// chunk from the running totals its writer kept (the lowest and highest allocated bytes
// of every chunk on the device of the highest peak) and the summary figures its writer
// stored, when it did. Read in the time of its chunk rows and tables, for a first picture
// of a big file while its events are read.

#include "core/analysis/seriespoint.h"
#include "core/analysis/tracesummary.h"
#include "core/progress.h"
#include "core/trace/trace.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct FileOverview
{
    std::shared_ptr<const Trace> trace; // without its memory events
    std::uint64_t events = 0;
    Device device;              // the device with the highest peak
    std::int64_t peakBytes = 0; // its peak
    // Per chunk on that device, from its first event's time on: the highest and the lowest
    // allocated bytes within it.
    std::vector<SeriesPoint> high;
    std::vector<SeriesPoint> low;
    std::optional<TraceSummary> summary; // the stored figures (summaryfigures.h), when valid
};

// Null for a file that is not native, is of format 1, has fewer than `leastEvents` events
// (known from its chunk rows before anything else is read), has no chunk that allocates,
// or whose chunks were not written in time order. Throws ImportError as loadTrace does.
std::optional<FileOverview> readFileOverview(const std::string &path, std::uint64_t leastEvents = 0,
                                             const Progress &progress = {});

} // namespace peaklens
