// SPDX-License-Identifier: Apache-2.0
#include "fileoverview.h"

#include "core/format/tracereader.h"
#include "core/import/traceloader.h"

#include <filesystem>

namespace peaklens {

std::optional<FileOverview> readFileOverview(const std::string &path, std::uint64_t leastEvents)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || detectFormat(path) != TraceFormat::Native)
        return std::nullopt;
    const auto rows = TraceReader::chunkRows(path);
    if (!rows || rows->events < leastEvents)
        return std::nullopt;
    const auto peak = primaryPeak(rows->peaks);
    if (!peak)
        return std::nullopt;
    FileOverview overview;
    overview.events = rows->events;
    overview.device = peak->device;
    overview.peakBytes = peak->bytes;
    std::int64_t lastNs = INT64_MIN;
    for (const ChunkLevel &level : rows->levels) {
        if (level.device != overview.device)
            continue;
        if (level.firstNs < lastNs || level.lastNs < level.firstNs)
            return std::nullopt; // not in time order: the levels would say nothing of when
        lastNs = level.lastNs;
        overview.high.push_back(SeriesPoint{level.firstNs, level.highBytes});
        overview.low.push_back(SeriesPoint{level.firstNs, level.lowBytes});
    }
    if (overview.high.empty())
        return std::nullopt;
    overview.high.push_back(SeriesPoint{lastNs, overview.high.back().bytes});
    overview.low.push_back(SeriesPoint{lastNs, overview.low.back().bytes});
    return overview;
}

} // namespace peaklens
