// SPDX-License-Identifier: Apache-2.0
#include "eventsreader.h"

#include "core/error.h"
#include "eventchunk.h"
#include "schema.h"
#include "sqlitedatabase.h"

#include <algorithm>
#include <array>
#include <bit>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace peaklens {

namespace {

static_assert(std::endian::native == std::endian::little,
              "format 1 stores little-endian arrays, copied as they are; a big-endian build needs byte swapping here");

// Format 1 columns: time, size, address, lane, category, phase, layer, stack.
constexpr std::array<std::size_t, 8> kFormat1Widths = {8, 8, 8, 2, 1, 1, 4, 4};
// Each format-2 column is behind a 4-byte length, and every value takes a byte or more.
constexpr std::uint64_t kFormat2Overhead = 7 * 4;
constexpr std::uint64_t kFormat2LeastBytesPerEvent = 7;

std::string chunkName(std::int64_t chunk)
{
    return "events chunk " + std::to_string(chunk);
}

template<typename T>
T load(const std::byte *column, std::size_t i)
{
    T value;
    std::memcpy(&value, column + i * sizeof(T), sizeof(T));
    return value;
}

// One chunk's ids and tags as the file numbers them, before they are checked and packed.
struct ChunkIds
{
    std::vector<std::uint32_t> lane, layer, stack;
    std::vector<std::uint8_t> tags;

    void resize(std::size_t count)
    {
        lane.resize(count);
        layer.resize(count);
        stack.resize(count);
        tags.resize(count);
    }
};

std::uint32_t lookup(const std::vector<std::uint32_t> &ids, std::uint32_t fileId, const char *what)
{
    if (fileId >= ids.size())
        throw Error(std::string("it refers to ") + what + " " + std::to_string(fileId) + ", which the file does not define");
    return ids[fileId];
}

// Checks the chunk's sizes, ids and tags as TraceBuilder::addEvent would, and packs them
// into the trace's columns from `at` on.
void pack(const FileIds &ids, const ChunkIds &chunk, std::size_t count, const MemoryEvents::Slots &slots, std::size_t at)
{
    for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t delta = slots.deltaBytes[at + i];
        if (delta > TraceBuilder::kMaxEventBytes || delta < -TraceBuilder::kMaxEventBytes)
            throw Error("an event of " + std::to_string(delta) + " bytes is larger than any device's memory");
        const std::uint32_t lane = lookup(ids.lanes, chunk.lane[i], "lane");
        const std::uint32_t layer =
            chunk.layer[i] == schema::kFileNoLayer ? kNoLayer : lookup(ids.layers, chunk.layer[i], "layer");
        const std::uint32_t stack = lookup(ids.stacks, chunk.stack[i], "stack");
        const unsigned category = chunk.tags[i] & 15u;
        const unsigned phase = chunk.tags[i] >> 4;
        if (category >= kCategoryCount || phase >= kPhaseCount)
            throw Error("an event has an unknown category or phase");
        slots.layerLane[at + i] = MemoryEvents::packLayerLane(layer, lane);
        slots.stackTags[at + i] = MemoryEvents::packStackTags(stack, static_cast<Category>(category), static_cast<Phase>(phase));
    }
}

// A format-2 chunk taken from the file, waiting to be decoded.
struct Job
{
    std::int64_t chunk = 0;
    std::size_t sequence = 0;  // 0, 1, 2, ... in file order
    MemoryEvents::Slots slots; // where its events go, `count` of each
    std::size_t count = 0;
    std::int64_t firstTimeNs = 0;
    eventchunk::Codec codec = eventchunk::Codec::Plain;
    std::uint64_t plainBytes = 0;
    std::string bytes;
};

// Decodes chunks on worker threads, each into the columns its job names; with no
// workers, on the caller's thread. A failed chunk stops the rest: the first in file order
// is the one reported.
class Decoders
{
public:
    Decoders(const FileIds &ids, unsigned workers)
        : m_ids(ids)
    {
        for (unsigned i = 0; i < workers; ++i)
            m_threads.emplace_back([this] { work(); });
    }

    ~Decoders() { stop(); }
    Decoders(const Decoders &) = delete;
    Decoders &operator=(const Decoders &) = delete;

    void push(Job job)
    {
        throwIfFailed();
        if (m_threads.empty()) {
            decode(job, m_inlineScratch);
            throwIfFailed();
            return;
        }
        std::unique_lock lock(m_mutex);
        // A few chunks ahead of the workers: enough to keep them busy, little held.
        m_space.wait(lock, [this] { return m_jobs.size() < 2 * m_threads.size(); });
        m_jobs.push_back(std::move(job));
        m_ready.notify_one();
    }

    // Waits until the job with this sequence number is decoded.
    void waitFor(std::size_t sequence)
    {
        std::unique_lock lock(m_mutex);
        m_decoded.wait(lock, [&] { return m_error || m_done.contains(sequence); });
        m_done.erase(sequence);
        lock.unlock();
        throwIfFailed();
    }

    void finish()
    {
        stop();
        throwIfFailed();
    }

private:
    struct Scratch
    {
        std::string plain;
        ChunkIds ids;
    };

    void stop()
    {
        {
            std::lock_guard lock(m_mutex);
            m_closed = true;
        }
        m_ready.notify_all();
        for (std::thread &thread : m_threads)
            thread.join();
        m_threads.clear();
    }

    void work()
    {
        Scratch scratch;
        for (;;) {
            Job job;
            {
                std::unique_lock lock(m_mutex);
                m_ready.wait(lock, [this] { return m_closed || !m_jobs.empty(); });
                if (m_jobs.empty())
                    return;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            m_space.notify_one();
            decode(job, scratch);
        }
    }

    void decode(const Job &job, Scratch &scratch)
    {
        {
            std::lock_guard lock(m_mutex);
            if (m_error)
                return;
        }
        try {
            scratch.ids.resize(job.count);
            const eventchunk::Target target{job.slots.timeNs,
                                            job.slots.deltaBytes,
                                            job.slots.addr,
                                            std::span(scratch.ids.lane).first(job.count),
                                            std::span(scratch.ids.layer).first(job.count),
                                            std::span(scratch.ids.stack).first(job.count),
                                            std::span(scratch.ids.tags).first(job.count)};
            eventchunk::decode(job.codec, job.plainBytes, job.bytes, job.firstTimeNs, target, scratch.plain);
            pack(m_ids, scratch.ids, job.count, job.slots, 0);
            std::lock_guard lock(m_mutex);
            m_done.insert(job.sequence);
        } catch (const Error &error) {
            std::lock_guard lock(m_mutex);
            if (!m_error || job.chunk < m_error->first)
                m_error.emplace(job.chunk, error.what());
        }
        m_decoded.notify_all();
    }

    void throwIfFailed()
    {
        std::lock_guard lock(m_mutex);
        if (m_error)
            throw Error("in " + chunkName(m_error->first) + ", " + m_error->second);
    }

    const FileIds &m_ids;
    std::vector<std::thread> m_threads;
    Scratch m_inlineScratch;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::condition_variable m_space;
    std::condition_variable m_decoded;
    std::set<std::size_t> m_done;
    std::deque<Job> m_jobs;
    bool m_closed = false;
    std::optional<std::pair<std::int64_t, std::string>> m_error;
};

unsigned decodingThreads(std::uint64_t events)
{
    if (events <= schema::kEventsPerChunk)
        return 0;
    return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

} // namespace

std::optional<TotalsPeak> primaryPeak(const std::vector<TotalsPeak> &peaks)
{
    const TotalsPeak *best = nullptr;
    for (const TotalsPeak &peak : peaks) {
        if (peak.bytes > 0 && (!best || peak.bytes > best->bytes || (peak.bytes == best->bytes && peak.device < best->device)))
            best = &peak;
    }
    if (!best)
        return std::nullopt;
    return *best;
}

EventsReader::EventsReader(SqliteDatabase &db, int formatVersion, std::int64_t afterChunk)
    : m_db(db)
    , m_version(formatVersion)
    , m_afterChunk(afterChunk)
{
}

std::string EventsReader::chunksAfter() const
{
    return " FROM events WHERE chunk > " + std::to_string(m_afterChunk);
}

EventsTableSize EventsReader::measure()
{
    m_size = {};
    m_size.lastChunk = m_afterChunk;
    m_peaks.clear();
    m_levels.clear();
    // Chunks are numbered 0, 1, 2, ... as they are written: one numbered otherwise was
    // damaged or moved, and its events would be skipped or read out of their order.
    if (m_afterChunk < 0) {
        if (const auto lowest = m_db.queryInteger("SELECT ifnull(min(chunk), 0) FROM events"); lowest < 0)
            throw Error(chunkName(lowest) + " has a negative number; events chunks are numbered from 0");
    }
    std::int64_t expected = m_afterChunk + 1;
    const auto numbered = [&](std::int64_t chunk) {
        if (chunk != expected)
            throw Error("events chunk " + std::to_string(expected) + " is missing; the next is " + chunkName(chunk));
        ++expected;
    };
    if (m_version == 1) {
        auto sizes = m_db.prepare("SELECT chunk, count, length(t_ns), length(delta_bytes), length(addr), length(lane), "
                                  "length(category), length(phase), length(layer), length(stack)"
                                  + chunksAfter() + " ORDER BY chunk");
        while (sizes.step()) {
            numbered(sizes.integer(0));
            const auto count = sizes.integer(1);
            if (count < 0 || count > (std::int64_t(1) << 32))
                throw Error(chunkName(sizes.integer(0)) + " claims " + std::to_string(count) + " events");
            for (std::size_t c = 0; c < kFormat1Widths.size(); ++c) {
                if (sizes.integer(static_cast<int>(c) + 2) != count * static_cast<std::int64_t>(kFormat1Widths[c]))
                    throw Error(chunkName(sizes.integer(0)) + " has columns of the wrong length");
            }
            m_size.events += static_cast<std::uint64_t>(count);
            m_size.plainBytes += static_cast<std::uint64_t>(count) * 36;
            m_size.lastChunk = std::max(m_size.lastChunk, sizes.integer(0));
        }
        return m_size;
    }
    auto sizes = m_db.prepare("SELECT chunk, count, codec, plain_bytes, length(columns), totals, t_first_ns, t_last_ns"
                              + chunksAfter() + " ORDER BY chunk");
    while (sizes.step()) {
        numbered(sizes.integer(0));
        const std::string chunk = chunkName(sizes.integer(0));
        const auto count = sizes.integer(1);
        if (count < 0 || count > static_cast<std::int64_t>(schema::kEventsPerChunk))
            throw Error(chunk + " claims " + std::to_string(count) + " events");
        // The running totals are checked here, once, for every reader: the whole load, the
        // streamed summary and a follower say the same of a damaged file.
        const auto bytes = sizes.blob(5);
        eventchunk::ChunkTotals totals;
        try {
            totals = eventchunk::readTotals({reinterpret_cast<const char *>(bytes.data()), bytes.size()});
        } catch (const Error &error) {
            throw Error("in " + chunk + ", " + error.what());
        }
        // Each device's highest running total, as the chunks' rows give them.
        for (const auto &[device, total] : totals.devices) {
            const TotalsPeak peak{device, total.highBytes, m_size.events + total.highEvent};
            const auto found =
                std::find_if(m_peaks.begin(), m_peaks.end(), [&peak](const TotalsPeak &p) { return p.device == peak.device; });
            if (found == m_peaks.end())
                m_peaks.push_back(peak);
            else if (peak.bytes > found->bytes)
                *found = peak;
            m_levels.push_back(
                ChunkLevel{sizes.integer(6), sizes.integer(7), device, total.lowBytes, total.highBytes, total.endBytes});
        }
        const auto plain = sizes.integer(3);
        const std::int64_t least = count * std::int64_t(kFormat2LeastBytesPerEvent) + std::int64_t(kFormat2Overhead);
        const std::int64_t most = count * std::int64_t(eventchunk::kMaxPlainBytesPerEvent) + std::int64_t(kFormat2Overhead);
        if (plain < least || plain > most)
            throw Error(chunk + " claims " + std::to_string(plain) + " bytes of columns for " + std::to_string(count)
                        + " events");
        const auto codec = static_cast<eventchunk::Codec>(sizes.integer(2));
        if (codec != eventchunk::Codec::Plain && codec != eventchunk::Codec::Zstd)
            throw Error(chunk + " is stored with the unknown codec " + std::to_string(sizes.integer(2)));
        if (codec == eventchunk::Codec::Plain && sizes.integer(4) != plain)
            throw Error(chunk + " has columns of the wrong length");
        m_size.events += static_cast<std::uint64_t>(count);
        m_size.plainBytes += static_cast<std::uint64_t>(plain);
        m_size.lastChunk = std::max(m_size.lastChunk, sizes.integer(0));
    }
    std::sort(m_peaks.begin(), m_peaks.end(), [](const TotalsPeak &a, const TotalsPeak &b) { return a.device < b.device; });
    return m_size;
}

void EventsReader::read(const FileIds &ids, TraceBuilder &builder, const std::function<void(std::size_t)> &chunkRead)
{
    if (ids.stacks.size() > MemoryEvents::kMaxStacks)
        throw Error("it has more than " + std::to_string(MemoryEvents::kMaxStacks)
                    + " distinct call stacks, more than PeakLens can hold");
    const MemoryEvents::Slots slots = builder.appendEvents(m_size.events);
    if (m_version == 1)
        readFormat1(ids, slots, chunkRead);
    else
        readFormat2(ids, slots, chunkRead);
}

void EventsReader::readFormat1(const FileIds &ids, MemoryEvents::Slots slots, const std::function<void(std::size_t)> &chunkRead)
{
    ChunkIds chunkIds;
    std::size_t at = 0;
    auto chunks = m_db.prepare("SELECT chunk, count, t_ns, delta_bytes, addr, lane, category, phase, layer, stack "
                               + chunksAfter() + " ORDER BY chunk");
    while (chunks.step()) {
        const auto count = static_cast<std::size_t>(chunks.integer(1));
        std::array<const std::byte *, 8> columns{};
        for (std::size_t c = 0; c < columns.size(); ++c) {
            const auto blob = chunks.blob(static_cast<int>(c) + 2);
            columns[c] = blob.data();
            if (count > 0 && (!columns[c] || blob.size() != count * kFormat1Widths[c]))
                throw Error("an events chunk changed while it was read");
        }
        if (count > slots.timeNs.size() - at)
            throw Error("an events chunk changed while it was read");
        if (count == 0)
            continue;
        std::memcpy(&slots.timeNs[at], columns[0], count * 8);
        std::memcpy(&slots.deltaBytes[at], columns[1], count * 8);
        std::memcpy(&slots.addr[at], columns[2], count * 8);
        chunkIds.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
            chunkIds.lane[i] = load<std::uint16_t>(columns[3], i);
            const auto category = load<std::uint8_t>(columns[4], i);
            const auto phase = load<std::uint8_t>(columns[5], i);
            // Out-of-range values stay out of range in the tag, for pack() to refuse.
            chunkIds.tags[i] =
                category >= 16 || phase >= 16 ? std::uint8_t(0xFF) : static_cast<std::uint8_t>(category | phase << 4);
            chunkIds.layer[i] = load<std::uint32_t>(columns[6], i);
            chunkIds.stack[i] = load<std::uint32_t>(columns[7], i);
        }
        try {
            pack(ids, chunkIds, count, slots, at);
        } catch (const Error &error) {
            throw Error("in " + chunkName(chunks.integer(0)) + ", " + error.what());
        }
        at += count;
        chunkRead(count);
    }
    if (at != slots.timeNs.size())
        throw Error("an events chunk changed while it was read");
}

template<typename Take>
void EventsReader::forEachFormat2Chunk(Take take)
{
    auto chunks =
        m_db.prepare("SELECT chunk, count, t_first_ns, codec, plain_bytes, columns" + chunksAfter() + " ORDER BY chunk");
    std::size_t sequence = 0, events = 0;
    while (chunks.step()) {
        Job job;
        job.chunk = chunks.integer(0);
        job.sequence = sequence++;
        job.count = static_cast<std::size_t>(chunks.integer(1));
        if (job.count > m_size.events - events)
            throw Error("an events chunk changed while it was read");
        events += job.count;
        job.firstTimeNs = chunks.integer(2);
        job.codec = static_cast<eventchunk::Codec>(chunks.integer(3));
        job.plainBytes = static_cast<std::uint64_t>(chunks.integer(4));
        const auto bytes = chunks.blob(5);
        job.bytes.assign(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        take(std::move(job));
    }
    if (events != m_size.events)
        throw Error("an events chunk changed while it was read");
}

void EventsReader::readFormat2(const FileIds &ids, MemoryEvents::Slots slots, const std::function<void(std::size_t)> &chunkRead)
{
    Decoders decoders(ids, decodingThreads(m_size.events));
    std::size_t at = 0;
    forEachFormat2Chunk([&](Job job) {
        const std::size_t count = job.count;
        job.slots = {slots.timeNs.subspan(at, count), slots.deltaBytes.subspan(at, count), slots.addr.subspan(at, count),
                     slots.layerLane.subspan(at, count), slots.stackTags.subspan(at, count)};
        at += count;
        decoders.push(std::move(job));
        chunkRead(count);
    });
    decoders.finish();
}

void EventsReader::stream(const FileIds &ids, const ChunkConsumer &consume, const std::function<void(std::size_t)> &chunkRead)
{
    if (m_version < 2)
        throw Error("its events are stored in format 1, which is read whole");
    if (ids.stacks.size() > MemoryEvents::kMaxStacks)
        throw Error("it has more than " + std::to_string(MemoryEvents::kMaxStacks)
                    + " distinct call stacks, more than PeakLens can hold");
    // Chunks decoded ahead on the workers, one more than there are workers (as fast as
    // twice as many, in less memory), handed on in file order; their buffers reused.
    struct Pending
    {
        MemoryEvents events;
        std::size_t first = 0;
        std::size_t sequence = 0;
    };
    const unsigned threads = decodingThreads(m_size.events);
    const std::size_t ahead = std::max(threads, 1u) + 1;
    std::deque<Pending> pending;
    std::vector<MemoryEvents> spare;
    Decoders decoders(ids, threads);
    const auto handOn = [&] {
        Pending &front = pending.front();
        decoders.waitFor(front.sequence);
        consume(front.events, front.first);
        spare.push_back(std::move(front.events));
        pending.pop_front();
    };
    std::size_t at = 0;
    forEachFormat2Chunk([&](Job job) {
        if (pending.size() >= ahead)
            handOn();
        Pending &next = pending.emplace_back();
        if (!spare.empty()) {
            next.events = std::move(spare.back());
            spare.pop_back();
        }
        next.first = at;
        next.sequence = job.sequence;
        job.slots = next.events.resizeUninitialized(job.count);
        at += job.count;
        const std::size_t count = job.count;
        decoders.push(std::move(job));
        chunkRead(count);
    });
    while (!pending.empty())
        handOn();
    decoders.finish();
}

} // namespace peaklens
