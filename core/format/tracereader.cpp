// SPDX-License-Identifier: Apache-2.0
#include "tracereader.h"

#include "nativefilereader.h"
#include "schema.h"

namespace peaklens {

std::shared_ptr<const Trace> TraceReader::read(const std::string &path, const Progress &progress)
{
    return NativeFileReader(path, {}, progress).read();
}

std::optional<std::uint64_t> TraceReader::eventCount(const std::string &path)
{
    return NativeFileReader(path, {}, {}).eventCount();
}

std::optional<TraceReader::StreamStart> TraceReader::chunkRows(const std::string &path)
{
    return NativeFileReader(path, {}, {}).chunkRows();
}

std::shared_ptr<const Trace> TraceReader::stream(const std::string &path, const ChunkStart &start, const ChunkConsumer &consume,
                                                 const Progress &progress, TimeSpan timed)
{
    NativeFileReader reader(path, {}, progress);
    reader.setTimeSpan(timed);
    reader.readTables();
    if (!reader.canStream())
        return nullptr;
    return reader.stream(start, consume);
}

std::shared_ptr<const Trace> TraceReader::readTables(const std::string &path, TimeSpan timed, const Progress &progress)
{
    NativeFileReader reader(path, {}, progress);
    reader.setTimeSpan(timed);
    return reader.tables();
}

std::shared_ptr<const Trace> TraceReader::readImage(const std::string &path, std::span<const char> image,
                                                    const Progress &progress)
{
    return NativeFileReader(path, image.empty() ? std::span<const char>("", 0) : image, progress).read();
}

bool TraceReader::recognizes(std::span<const std::byte> header)
{
    return header.size() >= kHeaderSize && hasSqliteMagic(header)
           && bigEndian32(header, 68) == static_cast<std::uint32_t>(schema::kApplicationId);
}

} // namespace peaklens
