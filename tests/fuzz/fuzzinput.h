#pragma once
// The fuzzers' input as the importers see a file's content: padded for simdjson.

#include "core/import/filebytes.h"

#include <simdjson.h>

#include <cstdint>
#include <cstring>

inline peaklens::FileBytes fuzzBytes(const std::uint8_t *data, std::size_t size)
{
    peaklens::FileBytes bytes;
    bytes.data.assign(size + simdjson::SIMDJSON_PADDING, '\0');
    if (size > 0)
        std::memcpy(bytes.data.data(), data, size);
    bytes.size = size;
    return bytes;
}
