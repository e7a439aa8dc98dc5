// SPDX-License-Identifier: Apache-2.0
#pragma once
// Loads a native *.peaklens file into a Trace, checking everything it reads: a file that
// is not a trace, from a newer PeakLens, truncated or damaged gets an ImportError that
// names the file and the problem. The file is opened read-only and never changed.
// Progress is reported by rows read; a cancel ends the read, even mid-statement, with
// Cancelled.

#include "core/progress.h"
#include "core/trace/trace.h"
#include "eventsreader.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace peaklens {

// The rows of a native file's timed tables (ranges, steps, kernels and markers) a read
// takes: those that overlap [beginNs, endNs]; by default, every row.
struct TimeSpan
{
    std::int64_t beginNs = INT64_MIN;
    std::int64_t endNs = INT64_MAX;
    bool whole() const { return beginNs == INT64_MIN && endNs == INT64_MAX; }
    bool empty() const { return beginNs > endNs; }
};

class TraceReader
{
public:
    static std::shared_ptr<const Trace> read(const std::string &path, const Progress &progress = {});
    // The same for a whole file already in memory (read from a pipe); `path` names it.
    static std::shared_ptr<const Trace> readImage(const std::string &path, std::span<const char> image,
                                                  const Progress &progress = {});
    // Reads everything but the memory events, calls start(trace, what is known), then hands
    // the events to `consume` a chunk at a time in file order (the order they were
    // written), each chunk's `first` its first event's index, its buffer the consumer's to
    // change until it returns: a file of any size is read in the memory of a few chunks.
    // The events are as stored: nothing is sorted, and categories a trace marks as worked
    // out from lifetimes (metakey::Categories) are not (LifetimeClassifier does that).
    // Returns the trace without its events, or null, having handed on nothing, when the
    // file's events can only be read whole (format 1): read() it then. When start()
    // returns false, no events are handed on.
    struct StoredFigures
    {
        std::int64_t analysis = 0; // the version of the analysis that computed them
        std::string bytes;
    };
    struct StreamStart
    {
        std::uint64_t events = 0;
        std::vector<TotalsPeak> peaks;  // as the file's running totals give them, to be checked
        std::vector<ChunkLevel> levels; // the same chunk by chunk
        // The summary its writer stored for exactly these events (format 3), unchecked.
        std::optional<StoredFigures> figures;
    };
    using ChunkStart = std::function<bool(const Trace &trace, const StreamStart &start)>;
    using ChunkConsumer = std::function<void(const Trace &trace, MemoryEvents &events, std::size_t first)>;
    // No rows of the timed tables.
    static constexpr TimeSpan kNoTime{INT64_MAX, INT64_MIN};
    static std::shared_ptr<const Trace> stream(const std::string &path, const ChunkStart &start, const ChunkConsumer &consume,
                                               const Progress &progress = {}, TimeSpan timed = {});
    // Every table but the memory events, the timed ones within `timed`: what a window of
    // the events needs beside them.
    static std::shared_ptr<const Trace> readTables(const std::string &path, TimeSpan timed, const Progress &progress = {});
    // How many memory events the file holds, from its chunk rows alone: cheap beside a read.
    // Null when that is not cheap (a log beside the file to replay first).
    static std::optional<std::uint64_t> eventCount(const std::string &path);
    // The same with the running totals the chunk rows hold (no figures): null for format 1,
    // which has none, and when eventCount would be.
    static std::optional<StreamStart> chunkRows(const std::string &path);
    // True when these first bytes of a file are those of a PeakLens trace.
    static bool recognizes(std::span<const std::byte> header);
};

} // namespace peaklens
