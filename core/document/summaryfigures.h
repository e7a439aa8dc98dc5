// SPDX-License-Identifier: Apache-2.0
#pragma once
// The figures a summary shows, stored in the native file that they summarize (format 3's
// figures table) by whoever wrote it, once it is complete: a summary of the file then
// reads the chunk rows and these, not its events. They are the summary summarizeFile
// computes from the events, keyed by the version of that analysis and the file's event
// count; figures of another version, for other events, or that do not agree with the
// file's running totals are passed over and the events read.

#include "core/analysis/tracesummary.h"
#include "core/format/tracereader.h"

#include <optional>
#include <string>

namespace peaklens {

// The version of what summarize() computes. Raise it whenever a figure a summary shows
// would come out differently for the same events: files keep the figures of the version
// that wrote them, and a reader uses only its own version's. tst_summaryfigures fails on
// a committed file whose stored figures no longer equal the computed ones.
inline constexpr std::int64_t kSummaryFiguresVersion = 1;

std::string encodeFigures(const TraceSummary &summary);

// The stored summary of `trace` (the file's tables, without events), when the figures are
// this version's, well formed, and agree with what the file's chunk rows say; else null.
std::optional<TraceSummary> storedSummary(const Trace &trace, const TraceReader::StreamStart &start);

// Computes the summary of the finished native file at `path`, which the caller has just
// written, and stores it there. Throws FileError or ImportError.
void storeSummaryFigures(const std::string &path);

} // namespace peaklens
