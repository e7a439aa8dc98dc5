#include "filebytes.h"

#include "core/error.h"
#include "core/format/readablefile.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

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
                                 const ImportProgress &progress)
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
                throw ImportError(m_path, std::string("is a damaged gzip file (") + (m_stream.msg ? m_stream.msg : "zlib error")
                                              + ")", consumed - m_stream.avail_in);
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

} // namespace

FileBytes readFileBytes(const std::string &path, std::size_t padding, const ImportProgress &progress)
{
    FileBytes result;
    std::vector<char> raw = readRaw(path, padding);
    const std::size_t rawSize = raw.size() - padding;
    if (!isGzip(raw.data(), rawSize)) {
        result.data = std::move(raw);
        result.size = rawSize;
        return result;
    }
    const std::uint64_t limit = std::min<std::uint64_t>(kMaxInflatedBytes, std::uint64_t(rawSize) * kMaxInflateRatio + (1 << 20));
    Inflater inflater(path);
    result.data = inflater.inflateAll(raw.data(), rawSize, padding, static_cast<std::size_t>(limit), progress);
    result.size = inflater.produced();
    result.gzipped = true;
    if (result.size >= limit)
        throw ImportError(path, "expands to more than " + std::to_string(limit >> 20)
                                    + " MiB when decompressed, far more than a trace of its size holds.");
    return result;
}

std::string readContentPrefix(const std::string &path, std::size_t bytes)
{
    std::ifstream file(path, std::ios::binary);
    std::string prefix(bytes, '\0');
    file.read(prefix.data(), static_cast<std::streamsize>(bytes));
    prefix.resize(static_cast<std::size_t>(file.gcount()));
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
