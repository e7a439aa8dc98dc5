// SPDX-License-Identifier: Apache-2.0
#include "eventchunk.h"

#include "columncodec.h"
#include "core/error.h"
#include "schema.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

namespace peaklens::eventchunk {

namespace {

constexpr int kColumnCount = 7;
constexpr std::size_t kLengthBytes = 4; // each column's length, little-endian
// zstd's fastest level: it already takes the columns to a quarter or less, and a
// collector compresses while the training runs.
constexpr int kZstdLevel = 1;
// Below this, compressing saves tens of bytes: not worth a frame to decode.
constexpr std::size_t kLeastCompressedBytes = 4096;

void putLength(std::size_t length, std::string &out)
{
    const auto value = static_cast<std::uint32_t>(length);
    for (std::size_t i = 0; i < kLengthBytes; ++i)
        out.push_back(static_cast<char>(value >> (8 * i)));
}

// The columns' bytes one after another, each behind its length.
class ColumnWalker
{
public:
    explicit ColumnWalker(std::string_view plain)
        : m_rest(plain)
    {
    }

    std::string_view next(const char *name)
    {
        if (m_rest.size() < kLengthBytes)
            throw Error(std::string("its columns end before the ") + name + " column");
        std::uint32_t length = 0;
        for (std::size_t i = 0; i < kLengthBytes; ++i)
            length |= std::uint32_t(static_cast<std::uint8_t>(m_rest[i])) << (8 * i);
        m_rest.remove_prefix(kLengthBytes);
        if (length > m_rest.size())
            throw Error(std::string("its ") + name + " column claims " + std::to_string(length) + " bytes, but only "
                        + std::to_string(m_rest.size()) + " are left");
        const std::string_view column = m_rest.substr(0, length);
        m_rest.remove_prefix(length);
        return column;
    }

    void finish() const
    {
        if (!m_rest.empty())
            throw Error("it holds " + std::to_string(m_rest.size()) + " bytes after its columns");
    }

private:
    std::string_view m_rest;
};

// Runs `read` on one column, saying which column a problem is in.
template<typename Read>
void readColumn(ColumnWalker &walker, const char *name, Read read)
{
    const std::string_view bytes = walker.next(name);
    try {
        read(bytes);
    } catch (const Error &error) {
        std::string problem = error.what();
        // columncodec says "the column ...": name it.
        if (problem.starts_with("the column "))
            problem = std::string("the ") + name + " column " + problem.substr(11);
        else
            problem = std::string("in the ") + name + " column, " + problem;
        throw Error(problem);
    }
}

std::string_view plainColumns(Codec codec, std::uint64_t plainBytes, std::string_view bytes, std::size_t count,
                              std::string &scratch)
{
    const std::uint64_t most = count * kMaxPlainBytesPerEvent + kColumnCount * kLengthBytes;
    if (plainBytes > most)
        throw Error("it claims " + std::to_string(plainBytes) + " bytes of columns, more than " + std::to_string(count)
                    + " events can take");
    if (codec == Codec::Plain) {
        if (bytes.size() != plainBytes)
            throw Error("its columns take " + std::to_string(bytes.size()) + " bytes, not the " + std::to_string(plainBytes)
                        + " its row says");
        return bytes;
    }
    if (codec != Codec::Zstd)
        throw Error("it is stored with the unknown codec " + std::to_string(static_cast<std::int64_t>(codec)));
    const unsigned long long framed = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
    if (framed == ZSTD_CONTENTSIZE_ERROR)
        throw Error("its compressed columns are not a zstd frame");
    if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != plainBytes)
        throw Error("its compressed columns hold " + std::to_string(framed) + " bytes, not the " + std::to_string(plainBytes)
                    + " its row says");
    scratch.resize(plainBytes);
    const std::size_t got = ZSTD_decompress(scratch.data(), scratch.size(), bytes.data(), bytes.size());
    if (ZSTD_isError(got))
        throw Error(std::string("its compressed columns are damaged (zstd: ") + ZSTD_getErrorName(got) + ")");
    if (got != plainBytes)
        throw Error("its compressed columns hold " + std::to_string(got) + " bytes, not the " + std::to_string(plainBytes)
                    + " its row says");
    return scratch;
}

} // namespace

void Columns::append(const MemoryEvent &event)
{
    timeNs.push_back(event.timeNs);
    deltaBytes.push_back(event.deltaBytes);
    addr.push_back(event.addr);
    lane.push_back(event.lane);
    layer.push_back(event.layer == kNoLayer ? schema::kFileNoLayer : event.layer);
    stack.push_back(event.stack);
    tags.push_back(tagOf(event.category, event.phase));
}

void Columns::clear()
{
    timeNs.clear();
    deltaBytes.clear();
    addr.clear();
    lane.clear();
    layer.clear();
    stack.clear();
    tags.clear();
}

Stored encode(const Columns &columns)
{
    std::string plain, column;
    const auto add = [&] {
        putLength(column.size(), plain);
        plain += column;
        column.clear();
    };
    const std::int64_t first = columns.empty() ? 0 : columns.timeNs.front();
    columncodec::putDifferences(std::span(columns.timeNs), first, column);
    add();
    columncodec::putSigned(columns.deltaBytes, column);
    add();
    columncodec::putDifferences(std::span(columns.addr), std::uint64_t(0), column);
    add();
    columncodec::putUnsigned(columns.lane, column);
    add();
    // The file's "no layer" is 2^32 - 1: one more wraps it to 0, a one-byte varint.
    std::vector<std::uint32_t> layers(columns.layer);
    for (std::uint32_t &layer : layers)
        ++layer;
    columncodec::putUnsigned(layers, column);
    add();
    columncodec::putUnsigned(columns.stack, column);
    add();
    column.assign(reinterpret_cast<const char *>(columns.tags.data()), columns.tags.size());
    add();

    Stored stored;
    stored.plainBytes = plain.size();
    if (plain.size() < kLeastCompressedBytes) {
        stored.bytes = std::move(plain);
        return stored;
    }
    std::string compressed(ZSTD_compressBound(plain.size()), '\0');
    const std::size_t size = ZSTD_compress(compressed.data(), compressed.size(), plain.data(), plain.size(), kZstdLevel);
    if (!ZSTD_isError(size) && size <= plain.size() - plain.size() / 8) {
        compressed.resize(size);
        stored.codec = Codec::Zstd;
        stored.bytes = std::move(compressed);
    } else {
        stored.bytes = std::move(plain);
    }
    return stored;
}

void decode(Codec codec, std::uint64_t plainBytes, std::string_view bytes, std::int64_t firstTimeNs, const Target &target,
            std::string &scratch)
{
    const std::size_t count = target.timeNs.size();
    ColumnWalker walker(plainColumns(codec, plainBytes, bytes, count, scratch));
    readColumn(walker, "time", [&](std::string_view b) { columncodec::getDifferences(b, firstTimeNs, target.timeNs); });
    readColumn(walker, "size", [&](std::string_view b) { columncodec::getSigned(b, target.deltaBytes); });
    readColumn(walker, "address", [&](std::string_view b) { columncodec::getDifferences(b, std::uint64_t(0), target.addr); });
    readColumn(walker, "lane", [&](std::string_view b) { columncodec::getUnsigned(b, target.lane); });
    readColumn(walker, "layer", [&](std::string_view b) { columncodec::getUnsigned(b, target.layer); });
    for (std::uint32_t &layer : target.layer)
        --layer;
    readColumn(walker, "stack", [&](std::string_view b) { columncodec::getUnsigned(b, target.stack); });
    readColumn(walker, "tag", [&](std::string_view b) {
        if (b.size() != count)
            throw Error("the column holds " + std::to_string(b.size()) + " bytes for " + std::to_string(count) + " events");
        if (count > 0) // an empty chunk's column may have no storage at all
            std::memcpy(target.tags.data(), b.data(), count);
    });
    walker.finish();
}

void RunningTotals::setLaneDevice(std::uint32_t lane, Device device)
{
    m_laneDevices[lane] = device;
}

std::string RunningTotals::add(const Columns &chunk)
{
    ChunkTotals totals;
    const auto step = [](Total &total, std::int64_t &running, std::int64_t delta, std::uint32_t event, bool first) {
        running += delta;
        if (first) {
            total.lowBytes = total.highBytes = running;
            total.highEvent = event;
        } else {
            total.lowBytes = std::min(total.lowBytes, running);
            if (running > total.highBytes) {
                total.highBytes = running;
                total.highEvent = event;
            }
        }
        total.endBytes = running;
    };
    for (std::size_t i = 0; i < chunk.size(); ++i) {
        const auto event = static_cast<std::uint32_t>(i);
        const std::uint32_t lane = chunk.lane[i];
        const bool newLane = !totals.lanes.contains(lane);
        step(totals.lanes[lane], m_laneBytes[lane], chunk.deltaBytes[i], event, newLane);
        const auto device = m_laneDevices.find(lane);
        if (device == m_laneDevices.end())
            continue;
        const bool newDevice = !totals.devices.contains(device->second);
        step(totals.devices[device->second], m_deviceBytes[device->second], chunk.deltaBytes[i], event, newDevice);
    }
    std::vector<std::int64_t> values;
    const auto put = [&values](const Total &total) {
        for (const std::int64_t value : {total.endBytes, total.lowBytes, total.highBytes, std::int64_t(total.highEvent)})
            values.push_back(value);
    };
    values.push_back(static_cast<std::int64_t>(totals.lanes.size()));
    for (const auto &[lane, total] : totals.lanes) {
        values.push_back(lane);
        put(total);
    }
    values.push_back(static_cast<std::int64_t>(totals.devices.size()));
    for (const auto &[device, total] : totals.devices) {
        values.push_back(static_cast<std::int64_t>(device.type));
        values.push_back(device.index);
        put(total);
    }
    std::string bytes;
    columncodec::putSigned(values, bytes);
    return bytes;
}

ChunkTotals readTotals(std::string_view bytes)
{
    const std::vector<std::int64_t> values = columncodec::getAllSigned(bytes);
    std::size_t at = 0;
    const auto next = [&]() {
        if (at == values.size())
            throw Error("its running totals end early");
        return values[at++];
    };
    const auto bounded = [&](std::int64_t low, std::int64_t high, const char *what) {
        const std::int64_t value = next();
        if (value < low || value > high)
            throw Error(std::string("its running totals name the ") + what + " " + std::to_string(value));
        return value;
    };
    const auto total = [&] {
        Total t;
        t.endBytes = next();
        t.lowBytes = next();
        t.highBytes = next();
        t.highEvent = static_cast<std::uint32_t>(bounded(0, schema::kEventsPerChunk - 1, "event"));
        return t;
    };
    ChunkTotals totals;
    for (std::int64_t lanes = bounded(0, INT32_MAX, "lane count"); lanes > 0; --lanes) {
        const auto lane = static_cast<std::uint32_t>(bounded(0, UINT32_MAX, "lane"));
        totals.lanes[lane] = total();
    }
    for (std::int64_t devices = bounded(0, INT32_MAX, "device count"); devices > 0; --devices) {
        const auto type = static_cast<DeviceType>(bounded(0, 1, "device type"));
        const auto index = static_cast<std::int16_t>(bounded(0, INT16_MAX, "device index"));
        totals.devices[Device{type, index}] = total();
    }
    if (at != values.size())
        throw Error("its running totals hold " + std::to_string(values.size() - at) + " values too many");
    return totals;
}

} // namespace peaklens::eventchunk
