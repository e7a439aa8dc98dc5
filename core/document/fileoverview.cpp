// SPDX-License-Identifier: Apache-2.0
#include "fileoverview.h"

#include "core/format/tracereader.h"
#include "core/import/traceloader.h"
#include "core/trace/loadbudget.h"
#include "summaryfigures.h"

#include <algorithm>
#include <filesystem>

namespace peaklens {

std::optional<FileOverview> readFileOverview(const std::string &path, std::uint64_t leastEvents, const Progress &progress)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || detectFormat(path) != TraceFormat::Native)
        return std::nullopt;
    if (leastEvents > 0) {
        const auto events = TraceReader::eventCount(path);
        if (!events || *events < leastEvents)
            return std::nullopt;
    }
    LoadBudget::Scope budget(path, std::filesystem::file_size(path, ec));
    FileOverview overview;
    bool inOrder = true;
    overview.trace = TraceReader::stream(
        path,
        [&](const Trace &trace, const TraceReader::StreamStart &start) {
            overview.events = start.events;
            const auto peak = std::max_element(start.peaks.begin(), start.peaks.end(),
                                               [](const TotalsPeak &a, const TotalsPeak &b) { return a.bytes < b.bytes; });
            if (peak == start.peaks.end() || peak->bytes <= 0)
                return false;
            overview.device = peak->device;
            overview.peakBytes = peak->bytes;
            std::int64_t lastNs = INT64_MIN;
            for (const ChunkLevel &level : start.levels) {
                if (level.device != overview.device)
                    continue;
                inOrder = inOrder && level.firstNs >= lastNs && level.lastNs >= level.firstNs;
                lastNs = level.lastNs;
                overview.high.push_back(SeriesPoint{level.firstNs, level.highBytes});
                overview.low.push_back(SeriesPoint{level.firstNs, level.lowBytes});
            }
            if (!overview.high.empty()) {
                // The last chunk ends at its last event.
                overview.high.push_back(SeriesPoint{lastNs, overview.high.back().bytes});
                overview.low.push_back(SeriesPoint{lastNs, overview.low.back().bytes});
            }
            overview.summary = storedSummary(trace, start);
            return false;
        },
        [](const Trace &, MemoryEvents &, std::size_t) {}, progress);
    if (!overview.trace || overview.high.empty() || !inOrder)
        return std::nullopt;
    return overview;
}

} // namespace peaklens
