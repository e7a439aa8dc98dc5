// SPDX-License-Identifier: Apache-2.0
#include "filebytes.h"

#include "core/error.h"
#include "core/format/readablefile.h"

#include <zlib.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

namespace peaklens {

namespace {

// A gzip stream may not expand beyond this ratio or size: beyond it is a bomb, not a trace.
constexpr std::uint64_t kMaxInflateRatio = 256; // traces compress 5 to 30 times
constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t(64) << 30;

bool isGzip(const char *data, std::size_t size)
{
    return size >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

std::vector<char> readRaw(const std::string &path, std::size_t padding)
{
    requireReadableFile(path);
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    const auto size = static_cast<std::size_t>(file.tellg());
    std::vector<char> data(size + padding, '\0');
    file.seekg(0);
    if (!file.read(data.data(), static_cast<std::streamsize>(size)))
        throw ImportError(path, "could not be read to its end.");
    data.resize(size + padding);
    return data;
}

class Inflater
{
public:
    explicit Inflater(const std::string &path)
        : m_path(path)
    {
        std::memset(&m_stream, 0, sizeof m_stream);
        if (inflateInit2(&m_stream, 15 + 32) != Z_OK) // 32: gzip header
            throw ImportError(path, "could not be decompressed: zlib failed to start.");
    }
    ~Inflater() { inflateEnd(&m_stream); }

    // Inflates everything (all gzip members); stops early once `limit` bytes are out.
    std::vector<char> inflateAll(const char *input, std::size_t inputSize, std::size_t padding, std::size_t limit,
                                 const Progress &progress)
    {
        std::vector<char> output;
        output.resize(std::min<std::size_t>(std::max<std::size_t>(inputSize * 4, 1 << 16), limit) + padding);
        std::size_t produced = 0;
        m_stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(input));
        m_stream.avail_in = 0;
        std::size_t consumed = 0;
        while (produced < limit) {
            if (m_stream.avail_in == 0) {
                const std::size_t chunk = std::min<std::size_t>(inputSize - consumed, 1u << 30);
                m_stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(input + consumed));
                m_stream.avail_in = static_cast<uInt>(chunk);
                consumed += chunk;
            }
            if (produced + padding == output.size())
                output.resize(std::min(output.size() * 2, limit + padding));
            const std::size_t room = std::min<std::size_t>(output.size() - padding - produced, 1u << 30);
            m_stream.next_out = reinterpret_cast<Bytef *>(output.data() + produced);
            m_stream.avail_out = static_cast<uInt>(room);
            const int code = inflate(&m_stream, Z_NO_FLUSH);
            produced += room - m_stream.avail_out;
            if (code == Z_STREAM_END) {
                // Concatenated gzip members continue; trailing zeros end the file.
                if (m_stream.avail_in == 0 && consumed == inputSize)
                    break;
                if (m_stream.avail_in > 0 && *m_stream.next_in == 0)
                    break;
                inflateReset(&m_stream);
                continue;
            }
            if (code == Z_BUF_ERROR && m_stream.avail_in == 0 && consumed == inputSize)
                throw ImportError(m_path, "is truncated: its gzip stream ends early", consumed);
            if (code != Z_OK && code != Z_BUF_ERROR)
                throw ImportError(m_path,
                                  std::string("is a damaged gzip file (") + (m_stream.msg ? m_stream.msg : "zlib error") + ")",
                                  consumed - m_stream.avail_in);
            if ((produced >> 26) != ((produced - (room - m_stream.avail_out)) >> 26))
                progress.tick(static_cast<double>(consumed - m_stream.avail_in) / static_cast<double>(inputSize) * 0.5);
        }
        output.resize(produced + padding);
        std::fill(output.begin() + static_cast<std::ptrdiff_t>(produced), output.end(), '\0');
        m_produced = produced;
        return output;
    }

    std::size_t produced() const { return m_produced; }

private:
    std::string m_path;
    z_stream m_stream;
    std::size_t m_produced = 0;
};

// Maps `size` bytes of the file into an anonymous region long enough for the padding:
// past the end of the file the region reads as zeros. Pages come in as they are first
// read (or as an importer asks, willRead), each the page cache's own: the mapping is
// private, and only a page an importer writes to is copied.
void *mapWithPadding(const std::string &path, std::size_t size, std::size_t length)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return nullptr;
    void *region = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *file = region == MAP_FAILED ? MAP_FAILED : ::mmap(region, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
    ::close(fd);
    if (region != MAP_FAILED && file == MAP_FAILED)
        ::munmap(region, length);
    if (file != MAP_FAILED)
        ::madvise(file, size, MADV_SEQUENTIAL); // read front to back: read ahead far
    return file == MAP_FAILED ? nullptr : region;
}

std::uintptr_t pageSize()
{
    static const auto size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

} // namespace

FileBytes::~FileBytes()
{
    release();
}

FileBytes::FileBytes(FileBytes &&other) noexcept
{
    *this = std::move(other);
}

FileBytes &FileBytes::operator=(FileBytes &&other) noexcept
{
    if (this == &other)
        return *this;
    release();
    // Moving a vector keeps its buffer: the content stays where it began within it.
    const std::ptrdiff_t offset = other.m_mapping || other.m_heap.empty() ? 0 : other.m_data - other.m_heap.data();
    m_heap = std::move(other.m_heap);
    m_mapping = std::exchange(other.m_mapping, nullptr);
    m_mappingLength = std::exchange(other.m_mappingLength, 0);
    m_data = std::exchange(other.m_data, nullptr);
    m_size = std::exchange(other.m_size, 0);
    m_capacity = std::exchange(other.m_capacity, 0);
    m_gzipped = other.m_gzipped;
    if (!m_mapping && !m_heap.empty())
        m_data = m_heap.data() + offset;
    return *this;
}

bool FileBytes::dropByteOrderMark()
{
    if (!view().starts_with(kUtf8ByteOrderMark))
        return false;
    m_data += kUtf8ByteOrderMark.size();
    m_size -= kUtf8ByteOrderMark.size();
    m_capacity -= kUtf8ByteOrderMark.size();
    return true;
}

void FileBytes::willRead(std::size_t offset, std::size_t length) const
{
    if (!m_mapping || length == 0)
        return;
    const auto page = pageSize();
    const auto begin = reinterpret_cast<std::uintptr_t>(m_data + offset) & ~(page - 1);
    const auto end = std::min(reinterpret_cast<std::uintptr_t>(m_data + offset + length),
                              reinterpret_cast<std::uintptr_t>(m_mapping) + m_mappingLength);
#ifdef MADV_POPULATE_READ
    const int advice = MADV_POPULATE_READ; // mapped now, without a fault per page
#else
    const int advice = MADV_WILLNEED;
#endif
    ::madvise(reinterpret_cast<void *>(begin), end - begin, advice); // a hint: a failure changes nothing
}

void FileBytes::doneReading(std::size_t offset, std::size_t length)
{
    if (!m_mapping)
        return;
    const auto page = pageSize();
    const auto begin = (reinterpret_cast<std::uintptr_t>(m_data + offset) + page - 1) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(m_data + offset + length) & ~(page - 1);
    if (end > begin)
        ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

void FileBytes::release()
{
    if (m_mapping)
        ::munmap(m_mapping, m_mappingLength);
    m_mapping = nullptr;
    m_heap.clear();
    m_data = nullptr;
    m_size = m_capacity = 0;
}

FileBytes FileBytes::copyOf(std::string_view content, std::size_t padding)
{
    FileBytes bytes;
    bytes.m_heap.assign(content.size() + padding, '\0');
    std::copy(content.begin(), content.end(), bytes.m_heap.begin());
    bytes.m_data = bytes.m_heap.data();
    bytes.m_size = content.size();
    bytes.m_capacity = bytes.m_heap.size();
    return bytes;
}

FileBytes readFileBytes(const std::string &path, std::size_t padding, const Progress &progress)
{
    constexpr std::size_t kMapAbove = 1u << 20;
    requireReadableFile(path);
    FileBytes result;
    std::error_code error;
    const std::uint64_t rawSize = std::filesystem::file_size(path, error);
    if (error)
        throw ImportError(path, "cannot be read: " + error.message() + ".");
    char magic[2] = {0, 0};
    std::ifstream(path, std::ios::binary).read(magic, 2);
    if (!isGzip(magic, rawSize) && rawSize > kMapAbove) {
        const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        const std::size_t length = (rawSize + padding + page - 1) / page * page;
        if (void *region = mapWithPadding(path, rawSize, length)) {
            result.m_mapping = region;
            result.m_mappingLength = length;
            result.m_data = static_cast<char *>(region);
            result.m_size = rawSize;
            result.m_capacity = length;
            return result;
        }
    }
    return decodedBytes(readRaw(path, padding), rawSize, path, padding, progress);
}

FileBytes streamBytes(std::vector<char> content, const std::string &path, std::size_t padding, const Progress &progress)
{
    const std::uint64_t rawSize = content.size();
    content.resize(content.size() + padding, '\0');
    return decodedBytes(std::move(content), rawSize, path, padding, progress);
}

FileBytes decodedBytes(std::vector<char> raw, std::uint64_t rawSize, const std::string &path, std::size_t padding,
                       const Progress &progress)
{
    FileBytes result;
    if (!isGzip(raw.data(), rawSize)) {
        result.m_heap = std::move(raw);
        result.m_size = rawSize;
    } else {
        const std::uint64_t limit =
            std::min<std::uint64_t>(kMaxInflatedBytes, std::uint64_t(rawSize) * kMaxInflateRatio + (1 << 20));
        Inflater inflater(path);
        result.m_heap = inflater.inflateAll(raw.data(), rawSize, padding, static_cast<std::size_t>(limit), progress);
        result.m_size = inflater.produced();
        result.m_gzipped = true;
        if (result.m_size >= limit)
            throw ImportError(path, "expands to more than " + std::to_string(limit >> 20)
                                        + " MiB when decompressed, far more than a trace of its size holds.");
    }
    result.m_data = result.m_heap.data();
    result.m_capacity = result.m_heap.size();
    return result;
}

std::string readContentPrefix(const std::string &path, std::size_t bytes)
{
    std::ifstream file(path, std::ios::binary);
    std::string prefix(bytes, '\0');
    file.read(prefix.data(), static_cast<std::streamsize>(bytes));
    prefix.resize(static_cast<std::size_t>(file.gcount()));
    return contentPrefix(std::move(prefix), bytes);
}

std::string contentPrefix(std::string prefix, std::size_t bytes)
{
    if (!isGzip(prefix.data(), prefix.size()))
        return prefix;
    // Inflate just enough of the start.
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 32) != Z_OK)
        return {};
    std::string out(bytes, '\0');
    stream.next_in = reinterpret_cast<Bytef *>(prefix.data());
    stream.avail_in = static_cast<uInt>(prefix.size());
    stream.next_out = reinterpret_cast<Bytef *>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    inflate(&stream, Z_SYNC_FLUSH);
    out.resize(out.size() - stream.avail_out);
    inflateEnd(&stream);
    return out;
}

} // namespace peaklens
