// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads the events table of a native file straight into a trace's event arrays: format 2
// chunks decoded on every core, format 1 arrays copied, every value checked. Used by
// TraceReader, which has read the lanes, layers and stacks the events refer to.

#include "core/trace/tracebuilder.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

class SqliteDatabase;

// The trace's index for each id the file uses.
struct FileIds
{
    const std::vector<std::uint32_t> &lanes;
    const std::vector<std::uint32_t> &layers;
    const std::vector<std::uint32_t> &stacks;
};

// A device's highest allocated bytes as the file's running totals give them: in file
// order, from 0 at the start. Equal to the peak of the trace when its events were written
// in time order, which a reader checks as it reads them.
struct TotalsPeak
{
    Device device;
    std::int64_t bytes = 0;
    std::uint64_t eventIndex = 0; // the first event to reach them
};

// The peak PeakScan would choose, from the totals: the first device in order with the
// most allocated, when that is above nothing.
std::optional<TotalsPeak> primaryPeak(const std::vector<TotalsPeak> &peaks);

// One chunk's running totals on one device, with the times of its first and last events
// (in file order): the file's levels without its events, for an overview.
struct ChunkLevel
{
    std::int64_t firstNs = 0;
    std::int64_t lastNs = 0;
    Device device;
    std::int64_t lowBytes = 0;
    std::int64_t highBytes = 0;
    std::int64_t endBytes = 0;
};

struct EventsTableSize
{
    std::uint64_t events = 0;
    // What the events take before compression: the input a load budget is measured by.
    std::uint64_t plainBytes = 0;
    std::int64_t lastChunk = -1; // the highest chunk number measured (the reader's start when none)
};

class EventsReader
{
public:
    // Reads the chunks numbered above `afterChunk`: all of them by default, only those
    // committed since for a reader following a file as it is written.
    EventsReader(SqliteDatabase &db, int formatVersion, std::int64_t afterChunk = -1);

    // Checks every chunk's row before anything is allocated; throws Error on damage.
    EventsTableSize measure();
    // Adds the events to the builder; `chunkRead(count)` is called after each chunk is
    // taken from the file, on this thread, and may throw to end the read. Throws Error
    // naming the chunk and what is wrong.
    void read(const FileIds &ids, TraceBuilder &builder, const std::function<void(std::size_t)> &chunkRead);

    // Format 2 only, after measure(): each device's highest running total over the chunks'
    // rows it measured, without decoding any, by device.
    const std::vector<TotalsPeak> &peaksFromTotals() const { return m_peaks; }
    // The same rows chunk by chunk, in file order.
    const std::vector<ChunkLevel> &levelsFromTotals() const { return m_levels; }

    // Format 2 only: hands the events on a chunk at a time in file order, on this thread,
    // `first` the index of the chunk's first event; a few chunks are in memory at once.
    using ChunkConsumer = std::function<void(MemoryEvents &events, std::size_t first)>;
    void stream(const FileIds &ids, const ChunkConsumer &consume, const std::function<void(std::size_t)> &chunkRead);

private:
    void readFormat1(const FileIds &ids, MemoryEvents::Slots slots, const std::function<void(std::size_t)> &chunkRead);
    void readFormat2(const FileIds &ids, MemoryEvents::Slots slots, const std::function<void(std::size_t)> &chunkRead);
    template<typename Take>
    void forEachFormat2Chunk(Take take);

    std::string chunksAfter() const;

    SqliteDatabase &m_db;
    int m_version;
    std::int64_t m_afterChunk;
    EventsTableSize m_size;
    std::vector<TotalsPeak> m_peaks;
    std::vector<ChunkLevel> m_levels;
};

} // namespace peaklens
