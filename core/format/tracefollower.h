// SPDX-License-Identifier: Apache-2.0
#pragma once
// Follows a native *.peaklens file while its writer (the collector, peaklens-replay) still
// appends to it: the first poll() reads everything committed so far, each later one only
// the rows committed since, into one trace kept in time order. What is new is said by
// index, so an analysis can take only that. The file is read as SQLite's own readers read
// a file being written, never written to; a damaged file gets the ImportError a plain
// read would give.

#include "core/progress.h"
#include "core/trace/trace.h"
#include "core/trace/tracegrowth.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace peaklens {

class NativeFileReader;

class TraceFollower
{
public:
    enum class Writer {
        Waiting,  // the file has no tables yet
        Writing,  // a writer holds it open and commits to it
        Finished, // the writer finished it (or it was written whole)
        Stopped,  // the writer's process ended without finishing it: what it committed stays
    };

    // What the last poll added, as indices into trace(): each table from there on is new.
    struct Update
    {
        std::size_t eventsFrom = 0;
        std::size_t reservedFrom = 0;
        std::size_t rangesFrom = 0; // a range is written when it ends: it may land before others
        std::size_t stepsFrom = 0;
        std::size_t kernelsFrom = 0;
        std::size_t markersFrom = 0;
        bool tablesChanged = false; // metadata, lanes, layers, stacks or kernel names
        // New events came before ones already held: all were sorted again, and analyses
        // must start over.
        bool reordered = false;
        // The writer finished and categories were worked out from lifetimes over every event.
        bool recategorized = false;
        std::size_t newEvents = 0;
        std::size_t newRows = 0; // of the other tables

        bool changedAnything() const;
    };
    // What an analysis of the followed trace takes in after `update`.
    TraceGrowth growth(const Update &update) const;

    explicit TraceFollower(std::string path);
    ~TraceFollower();
    TraceFollower(const TraceFollower &) = delete;
    TraceFollower &operator=(const TraceFollower &) = delete;

    // Reads what was committed since the last call. Throws ImportError when the file is
    // (or becomes) something other than a growing trace.
    Update poll();

    const std::string &path() const { return m_path; }
    const Trace &trace() const { return *m_trace; }
    Writer writer() const { return m_writer; }
    // A sentence on the writer: "peaklens-replay (pid 4242) is writing it", "...finished it".
    std::string writerText() const;
    // The writer's process id when writer.process names this machine: what a user may stop.
    std::optional<long> localWriterPid() const;
    // True while later polls may still find something new.
    bool isLive() const { return m_writer == Writer::Waiting || m_writer == Writer::Writing; }

private:
    void merge(Trace added, Update &update);
    Writer findWriter() const;
    // Throws ImportError when the file at the path is no longer the one followed so far:
    // another moved over it, it shrank, or another writer's file took its place.
    void checkSameFile();

    // What identifies the file followed: its device and inode, its size when last read,
    // and its writer once the file named one (and the original's, for a copy: tracemirror.h).
    struct Identity
    {
        std::uint64_t device = 0, inode = 0, bytes = 0;
        std::string writer, source;
    };
    // Whether the file now at the path is the finished original `copy` was copied from.
    bool finishedCopyOf(const Identity &copy) const;
    std::optional<Identity> m_identity;

    std::string m_path;
    Progress m_progress;
    std::unique_ptr<NativeFileReader> m_reader;
    std::unique_ptr<Trace> m_trace;
    Writer m_writer = Writer::Waiting;
    std::int64_t m_firstNs = INT64_MAX; // the span of every time read so far
    std::int64_t m_lastNs = INT64_MIN;
};

} // namespace peaklens
