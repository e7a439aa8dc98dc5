// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fuzzers' input as the importers see a file's content: padded for simdjson.

#include "core/import/filebytes.h"

#include <simdjson.h>

#include <cstdint>
#include <cstring>

inline peaklens::FileBytes fuzzBytes(const std::uint8_t *data, std::size_t size)
{
    return peaklens::FileBytes::copyOf(std::string_view(reinterpret_cast<const char *>(data), size), simdjson::SIMDJSON_PADDING);
}
