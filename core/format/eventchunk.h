// SPDX-License-Identifier: Apache-2.0
#pragma once
// One chunk of memory events as format 2 of the native file stores it (docs/formats.md):
// seven varint columns of columncodec, each preceded by its length in bytes, the whole
// compressed with zstd when it is 4 KiB or more and that saves an eighth. Lanes, layers
// and stacks are the file's own ids; the reader maps them to the trace's.
//
// With each chunk the writer keeps running totals (ChunkTotals): per lane and per device,
// the bytes allocated at the chunk's end and the lowest and highest they were within it,
// so the peak, a coarse timeline or a time range can be found from the chunks' rows alone.

#include "core/trace/device.h"
#include "core/trace/memoryevents.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens::eventchunk {

enum class Codec : std::int64_t { Plain = 0, Zstd = 1 };

// A decoded chunk needs at most this many plain bytes per event: three 64-bit varints of
// 10 bytes, three 32-bit ones of 5, and the tag byte.
inline constexpr std::size_t kMaxPlainBytesPerEvent = 3 * 10 + 3 * 5 + 1;

// The tag byte: category in the low four bits, phase in the high four.
constexpr std::uint8_t tagOf(Category category, Phase phase)
{
    return static_cast<std::uint8_t>(static_cast<unsigned>(category) | static_cast<unsigned>(phase) << 4);
}

// One chunk's events column by column, numbered as the file numbers things.
struct Columns
{
    std::vector<std::int64_t> timeNs;
    std::vector<std::int64_t> deltaBytes;
    std::vector<std::uint64_t> addr;
    std::vector<std::uint32_t> lane;
    std::vector<std::uint32_t> layer; // schema::kFileNoLayer for none
    std::vector<std::uint32_t> stack;
    std::vector<std::uint8_t> tags;

    std::size_t size() const { return timeNs.size(); }
    bool empty() const { return timeNs.empty(); }
    void append(const MemoryEvent &event); // event.layer kNoLayer becomes kFileNoLayer
    void clear();
};

struct Stored
{
    Codec codec = Codec::Plain;
    std::uint64_t plainBytes = 0; // the columns' size before compression
    std::string bytes;
};

// Times are stored as differences from the chunk's first time, which its row holds.
Stored encode(const Columns &columns);

// Where a decoded chunk goes: times, sizes and addresses in place, ids and tags for the
// caller to check and map. Every span has the chunk's event count.
struct Target
{
    std::span<std::int64_t> timeNs;
    std::span<std::int64_t> deltaBytes;
    std::span<std::uint64_t> addr;
    std::span<std::uint32_t> lane;
    std::span<std::uint32_t> layer;
    std::span<std::uint32_t> stack;
    std::span<std::uint8_t> tags;
};

// Throws Error saying what is wrong when the bytes do not hold exactly that many events.
// `scratch` keeps the decompressed columns between calls.
void decode(Codec codec, std::uint64_t plainBytes, std::string_view bytes, std::int64_t firstTimeNs, const Target &target,
            std::string &scratch);

// The running totals of one lane or one device at the end of a chunk.
struct Total
{
    std::int64_t endBytes = 0; // allocated when the chunk ends
    std::int64_t lowBytes = 0; // the lowest after any of the chunk's events
    std::int64_t highBytes = 0;
    std::uint32_t highEvent = 0; // the chunk's first event to reach highBytes

    bool operator==(const Total &) const = default;
};

struct ChunkTotals
{
    std::map<std::uint32_t, Total> lanes; // only the lanes with events in the chunk
    std::map<Device, Total> devices;

    bool operator==(const ChunkTotals &) const = default;
};

// Running totals over a file's chunks in the order they are written.
class RunningTotals
{
public:
    void setLaneDevice(std::uint32_t lane, Device device);
    // The totals of the next chunk, as bytes for its row.
    std::string add(const Columns &chunk);

private:
    std::map<std::uint32_t, std::int64_t> m_laneBytes;
    std::map<Device, std::int64_t> m_deviceBytes;
    std::map<std::uint32_t, Device> m_laneDevices;
};

// Throws Error when the bytes are not a ChunkTotals.
ChunkTotals readTotals(std::string_view bytes);

} // namespace peaklens::eventchunk
