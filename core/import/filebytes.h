#pragma once
// Reads a whole input file into memory, inflating gzip transparently, with zeroed padding
// after the data so SIMD parsers may read past its end.

#include "importprogress.h"

#include <string>
#include <vector>

namespace peaklens {

struct FileBytes
{
    std::vector<char> data; // size() + padding bytes of zeros
    std::size_t size = 0;   // the content's length
    bool gzipped = false;

    std::string_view view() const { return {data.data(), size}; }
};

// Throws ImportError for unreadable files, broken gzip streams and gzip bombs.
FileBytes readFileBytes(const std::string &path, std::size_t padding, const ImportProgress &progress = {});
// The first bytes of the content (inflated when gzipped), for sniffing the format.
std::string readContentPrefix(const std::string &path, std::size_t bytes);

} // namespace peaklens
