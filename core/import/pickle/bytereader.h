// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bytes of a pickle as its opcodes read them: bounds-checked reads, and the values of the
// opcodes that push one number, string or constant. Errors name the file and the byte where
// the opcode being read began.

#include "opcodes.h"
#include "value.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace peaklens::pickle {

class ByteReader
{
public:
    ByteReader(const char *data, std::size_t size, const std::string &path)
        : m_data(data)
        , m_size(size)
        , m_path(path)
    {
    }

    std::size_t position() const { return m_pos; }
    std::size_t size() const { return m_size; }
    std::size_t opcodeStart() const { return m_opcodeStart; }
    // Back to where an opcode began, to read it again.
    void rewind(std::size_t position) { m_pos = position; }

    // The next opcode; errors from here on name where it began.
    [[gnu::always_inline]] unsigned char opcode()
    {
        m_opcodeStart = m_pos;
        return static_cast<unsigned char>(*read(1));
    }
    // The opcode after this one, not read yet (STOP at the end).
    unsigned char peek() const { return static_cast<unsigned char>(m_pos < m_size ? m_data[m_pos] : static_cast<char>(STOP)); }

    // The hot path of every opcode: kept inline, its failure out of line.
    [[gnu::always_inline]] const char *read(std::size_t count)
    {
        if (count > m_size - m_pos) [[unlikely]]
            failTruncated();
        const char *at = m_data + m_pos;
        m_pos += count;
        return at;
    }
    template<typename T>
    T readLittleEndian()
    {
        T value;
        std::memcpy(&value, read(sizeof(T)), sizeof(T));
        return value;
    }
    std::string_view readLine();

    // The value an opcode that pushes one number, string or constant pushes, decoded into
    // `value` in place; false (nothing read) for any other opcode. Inline: the hot path of
    // every value.
    [[gnu::always_inline]] bool scalar(unsigned char op, Value &value)
    {
        switch (op) {
        case BININT1:
            value = Value::fromInt(static_cast<unsigned char>(*read(1)));
            return true;
        case BININT2:
            value = Value::fromInt(readLittleEndian<std::uint16_t>());
            return true;
        case BININT:
            value = Value::fromInt(readLittleEndian<std::int32_t>());
            return true;
        case LONG1:
            value = longInteger(static_cast<unsigned char>(*read(1)));
            return true;
        case SHORT_BINUNICODE:
            value = text(Kind::String, static_cast<unsigned char>(*read(1)));
            return true;
        case NONE:
            value = Value::none();
            return true;
        case NEWTRUE:
        case NEWFALSE:
            value = Value::boolean(op == NEWTRUE);
            return true;
        case LONG4:
        case INT:
        case LONG:
        case BINFLOAT:
        case FLOAT:
        case BINUNICODE:
        case BINUNICODE8:
        case SHORT_BINBYTES:
        case SHORT_BINSTRING:
        case BINBYTES:
        case BINSTRING:
        case BINBYTES8:
        case BYTEARRAY8:
            value = rareScalar(op);
            return true;
        default:
            return false;
        }
    }

    [[noreturn]] void fail(const std::string &problem) const;
    [[noreturn]] void failTruncated() const;

private:
    Value rareScalar(unsigned char op);
    Value text(Kind kind, std::uint64_t length)
    {
        if (length > UINT32_MAX) [[unlikely]]
            fail("holds a string longer than 4 GiB");
        const char *text = read(static_cast<std::size_t>(length));
        return Value::fromText(kind, text, static_cast<std::uint32_t>(length));
    }
    // Little-endian two's complement of any length, as LONG1 and LONG4 store it.
    Value longInteger(std::size_t length)
    {
        const auto *bytes = reinterpret_cast<const unsigned char *>(read(length));
        // Addresses and times take 5 to 8 bytes: one load, then what lies beyond masked off.
        if (length > 0 && length < 8 && bytes + 8 <= reinterpret_cast<const unsigned char *>(m_data + m_size)) [[likely]] {
            std::uint64_t bits;
            std::memcpy(&bits, bytes, 8);
            const unsigned shift = 64 - 8 * static_cast<unsigned>(length);
            return Value::fromInt(static_cast<std::int64_t>(bits << shift) >> shift); // sign-extended
        }
        return anyLongInteger(bytes, length);
    }
    Value anyLongInteger(const unsigned char *bytes, std::size_t length);
    Value decimal(std::string_view line);

    const char *m_data;
    std::size_t m_size;
    const std::string &m_path;
    std::size_t m_pos = 0;
    std::size_t m_opcodeStart = 0;
};

} // namespace peaklens::pickle
