// SPDX-License-Identifier: Apache-2.0
#pragma once
// A whole input file in memory, inflated when gzipped, followed by zeroed padding so SIMD
// parsers may read past its end. Large plain files are mapped rather than copied; the
// mapping is private, so importers may patch bytes in it without touching the file.

#include "core/progress.h"

#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

class FileBytes
{
public:
    FileBytes() = default;
    ~FileBytes();
    FileBytes(FileBytes &&other) noexcept;
    FileBytes &operator=(FileBytes &&other) noexcept;
    FileBytes(const FileBytes &) = delete;
    FileBytes &operator=(const FileBytes &) = delete;

    // A copy of `content` with `padding` zero bytes after it.
    static FileBytes copyOf(std::string_view content, std::size_t padding);

    char *data() { return m_data; }
    const char *data() const { return m_data; }
    std::size_t size() const { return m_size; }         // the content's length
    std::size_t capacity() const { return m_capacity; } // size() plus at least the padding asked for
    std::string_view view() const { return {m_data, m_size}; }
    bool gzipped() const { return m_gzipped; }
    // For a mapped file, what a reader will read next, [offset, offset + length): brought
    // into memory now. Other bytes are in memory already; then it does nothing.
    void willRead(std::size_t offset, std::size_t length) const;
    // For a mapped file, what a reader has read and will not need again: the pages wholly
    // inside [offset, offset + length) leave memory. Read again, they read as the file does,
    // without any byte the reader changed there. Bytes copied to the heap stay.
    void doneReading(std::size_t offset, std::size_t length);
    // Text editors on some systems begin UTF-8 files with a byte-order mark; the formats
    // know nothing of it. True when there was one.
    bool dropByteOrderMark();

private:
    friend FileBytes decodedBytes(std::vector<char> raw, std::uint64_t rawSize, const std::string &path, std::size_t padding,
                                  const Progress &progress);
    friend FileBytes readFileBytes(const std::string &path, std::size_t padding, const Progress &progress);
    void release();

    std::vector<char> m_heap;
    void *m_mapping = nullptr;
    std::size_t m_mappingLength = 0;
    char *m_data = nullptr;
    std::size_t m_size = 0;
    std::size_t m_capacity = 0;
    bool m_gzipped = false;
};

// Throws ImportError for unreadable files, broken gzip streams and gzip bombs.
FileBytes readFileBytes(const std::string &path, std::size_t padding, const Progress &progress = {});
// What a pipe delivered (see InputFile), inflated when gzipped, with the padding.
FileBytes streamBytes(std::vector<char> content, const std::string &path, std::size_t padding, const Progress &progress = {});
// `raw` (rawSize bytes and the padding) as is, or inflated when gzipped.
FileBytes decodedBytes(std::vector<char> raw, std::uint64_t rawSize, const std::string &path, std::size_t padding,
                       const Progress &progress);
// The first bytes of the content (inflated when gzipped), for sniffing the format.
std::string readContentPrefix(const std::string &path, std::size_t bytes);
// The same for a prefix already read.
std::string contentPrefix(std::string prefix, std::size_t bytes);

} // namespace peaklens
