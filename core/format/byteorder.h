// SPDX-License-Identifier: Apache-2.0
#pragma once
// Integers as the files and streams PeakLens reads and writes hold them: big-endian in
// SQLite's file format, little-endian in PeakLens's own frames (`send`, `record --send`).

#include <cstddef>
#include <cstdint>
#include <span>

namespace peaklens {

inline std::uint32_t bigEndian(std::span<const std::byte> bytes, std::size_t offset, std::size_t count)
{
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < count; ++i)
        value = value << 8 | std::to_integer<std::uint32_t>(bytes[offset + i]);
    return value;
}

inline std::uint32_t bigEndian32(std::span<const std::byte> bytes, std::size_t offset)
{
    return bigEndian(bytes, offset, 4);
}

inline std::uint32_t bigEndian16(std::span<const std::byte> bytes, std::size_t offset)
{
    return bigEndian(bytes, offset, 2);
}

inline void putLittleEndian(char *out, std::uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out[i] = static_cast<char>(value >> (8 * i) & 0xFF);
}

inline std::uint64_t littleEndian(const char *in, int bytes)
{
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i)
        value |= std::uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
    return value;
}

} // namespace peaklens
