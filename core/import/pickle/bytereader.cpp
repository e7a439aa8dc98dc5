// SPDX-License-Identifier: Apache-2.0
#include "bytereader.h"

#include "core/error.h"

#include <algorithm>
#include <charconv>

namespace peaklens::pickle {

void ByteReader::fail(const std::string &problem) const
{
    throw ImportError(m_path, "is not a valid pickle: it " + problem, m_opcodeStart);
}

void ByteReader::failTruncated() const
{
    throw ImportError(m_path, "is truncated: the pickle ends in the middle of a value", m_opcodeStart);
}

std::string_view ByteReader::readLine()
{
    const char *start = m_data + m_pos;
    const void *newline = std::memchr(start, '\n', m_size - m_pos);
    if (!newline)
        failTruncated();
    const auto length = static_cast<std::size_t>(static_cast<const char *>(newline) - start);
    m_pos += length + 1;
    return {start, length};
}

Value ByteReader::rareScalar(unsigned char op)
{
    switch (op) {
    case LONG4: {
        const auto length = readLittleEndian<std::int32_t>();
        if (length < 0)
            fail("holds an integer of negative length");
        return longInteger(static_cast<std::size_t>(length));
    }
    case INT:
    case LONG:
        return decimal(readLine());
    case BINFLOAT: {
        std::uint64_t bits = 0;
        const auto *bytes = reinterpret_cast<const unsigned char *>(read(8));
        for (int i = 0; i < 8; ++i)
            bits = bits << 8 | bytes[i]; // big-endian
        double value;
        std::memcpy(&value, &bits, sizeof value);
        return Value::fromFloat(value);
    }
    case FLOAT: {
        const std::string_view line = readLine();
        double value = 0;
        if (std::from_chars(line.data(), line.data() + line.size(), value).ec != std::errc())
            fail("holds a float that is not one");
        return Value::fromFloat(value);
    }
    case BINUNICODE:
        return text(Kind::String, readLittleEndian<std::uint32_t>());
    case BINUNICODE8:
        return text(Kind::String, readLittleEndian<std::uint64_t>());
    case SHORT_BINBYTES:
    case SHORT_BINSTRING:
        return text(op == SHORT_BINBYTES ? Kind::Bytes : Kind::String, static_cast<unsigned char>(*read(1)));
    case BINBYTES:
    case BINSTRING:
        return text(op == BINBYTES ? Kind::Bytes : Kind::String, readLittleEndian<std::uint32_t>());
    default: // BINBYTES8, BYTEARRAY8
        return text(Kind::Bytes, readLittleEndian<std::uint64_t>());
    }
}

// Of any length: 0 bytes, 8, and the 9 that addresses of 2^63 and above take.
Value ByteReader::anyLongInteger(const unsigned char *bytes, std::size_t length)
{
    if (length == 0)
        return Value::fromInt(0);
    const bool negative = bytes[length - 1] & 0x80;
    // Bytes above the eighth must only extend the sign (or be the 0 of a large unsigned).
    for (std::size_t i = 8; i < length; ++i) {
        if (bytes[i] != (negative ? 0xFF : 0x00))
            fail("holds an integer of " + std::to_string(length) + " bytes, larger than 64 bits");
    }
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < std::min<std::size_t>(length, 8); ++i)
        bits |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
    if (length < 8 && negative)
        bits |= ~std::uint64_t(0) << (8 * length);
    if (negative) {
        if (length > 8 && !(bits >> 63))
            fail("holds a negative integer below -2^63");
        return Value::fromInt(static_cast<std::int64_t>(bits));
    }
    return Value::fromUInt(bits);
}

Value ByteReader::decimal(std::string_view line)
{
    if (line.ends_with('L'))
        line.remove_suffix(1);
    if (line == "00" || line == "01")
        return Value::boolean(line == "01");
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc() || end != line.data() + line.size())
        fail("holds an integer that is not one");
    return Value::fromInt(value);
}

} // namespace peaklens::pickle
