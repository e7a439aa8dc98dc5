// SPDX-License-Identifier: Apache-2.0
#pragma once
// The summary of a trace file with as little of it in memory as its format allows: a
// native file of format 3 whose writer stored the figures is not read further than its
// chunk rows; one of format 2 or 3 whose events were written in time order is read a
// chunk at a time and summarized as it is read (with a pass before, when its categories
// are worked out from lifetimes); any other file is loaded whole and summarized. The
// figures are the same either way.

#include "core/analysis/tracesummary.h"
#include "core/document/analysedtrace.h"
#include "core/progress.h"

#include <memory>
#include <optional>
#include <string>

namespace peaklens {

struct FileSummary
{
    // The trace; without its memory events when they were read a chunk at a time or not
    // at all.
    std::shared_ptr<const Trace> trace;
    TraceSummary summary;
    bool streamed = false;
    bool stored = false; // the figures its writer stored, no events read (summaryfigures.h)
};

// Whether a native file's stored summary figures stand for its events.
enum class StoredFigures { Use, Ignore };

// Throws ImportError as loadTrace does.
FileSummary summarizeFile(const std::string &path, const Progress &progress = {}, StoredFigures figures = StoredFigures::Use);

// A native file of format 2 with more than `wholeUpTo` memory events, in time order, read
// as a window: the whole chunks of about `maxEvents` events around the peak its totals
// name, read in one pass that stops after them. The blocks live when the window opens
// (every device's, applied from the file's first event) become allocations at the
// window's first instant, so every level in it is the file's; ranges, steps, kernels and
// markers are those that overlap it, and its import warnings say what was left out.
struct PeakWindow
{
    std::shared_ptr<const Trace> trace;
    std::size_t firstEvent = 0;    // the file's index of the window's first event
    std::size_t readEvents = 0;    // events of the file in the window
    std::size_t carriedBlocks = 0; // allocations put first for the blocks live before it
    std::size_t fileEvents = 0;
};

// Null when the file has no more than `wholeUpTo` (or `maxEvents`) events, cannot be read a chunk at a time, or its
// totals do not match its events: it is then for loadTrace to read whole. Throws
// ImportError as loadTrace does. With `fromNs`, the window is not the peak's: it begins
// with the chunk that reaches that time (the last chunk for a time past the end).
std::optional<PeakWindow> readPeakWindow(const std::string &path, std::size_t maxEvents, std::size_t wholeUpTo,
                                         const Progress &progress = {}, std::optional<std::int64_t> fromNs = std::nullopt);

// A trace as the app, the CLI's plan, diff and report and every other analysis open it:
// a native file of more than LoadBudget::kDocumentEvents events (more than a document may
// hold in memory) as the window of that many around its peak, and a file of another
// format with that many events (a huge snapshot) the same way, from its native copy
// (nativeCopyPath); any other file whole. Throws ImportError as loadTrace does.
TracePtr openTrace(const std::string &path, const Progress &progress = {});

// openTrace's trace, and the native file it is a window of (the file itself or its
// native copy; empty when the trace is whole). With `fromNs`, a window from that time
// (on the file's clock) instead of the peak's, for a file that opens as a window.
struct OpenedTrace
{
    TracePtr trace;
    std::string windowOf;
};
OpenedTrace openTraceWindow(const std::string &path, const Progress &progress = {},
                            std::optional<std::int64_t> fromNs = std::nullopt);

// Where the native copy of a non-native trace file lives: in the user's cache
// ($PEAKLENS_CACHE_DIR, else $XDG_CACHE_HOME/peaklens, else ~/.cache/peaklens, under
// copies/), named after the input's name and a hash of its absolute path, size and
// modification time, so a changed input gets a new copy. Empty when no cache folder is known.
std::string nativeCopyPath(const std::string &input);
// The same, analysed (analyseTrace) on `chain`.
AnalysedTracePtr openAnalysed(const std::string &path, const ChainSelection &chain = {}, const Progress &progress = {});

} // namespace peaklens
