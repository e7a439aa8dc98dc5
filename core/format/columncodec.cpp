// SPDX-License-Identifier: Apache-2.0
#include "columncodec.h"

#include "core/error.h"

#include <algorithm>
#include <cstring>

namespace peaklens::columncodec {

namespace {

constexpr std::uint64_t zigzag(std::int64_t value)
{
    return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

constexpr std::int64_t unzigzag(std::uint64_t value)
{
    return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

void putVarint(std::uint64_t value, std::string &out)
{
    while (value >= 0x80) {
        out.push_back(static_cast<char>(static_cast<std::uint8_t>(value) | 0x80));
        value >>= 7;
    }
    out.push_back(static_cast<char>(value));
}

// Reads varints from a column, one after another, checking every byte.
class Reader
{
public:
    Reader(std::string_view bytes, std::size_t count)
        : m_at(reinterpret_cast<const std::uint8_t *>(bytes.data()))
        , m_end(m_at + bytes.size())
        , m_count(count)
    {
    }

    // Copies single-byte values while the next eight bytes all are: ids and tags mostly are.
    // Returns how many of `out`'s values it filled, from `index` on.
    template<typename T>
    std::size_t runOfSmallValues(T *out, std::size_t index, std::size_t count)
    {
        std::size_t done = 0;
        while (index + done + 8 <= count && m_end - m_at >= 8) {
            std::uint64_t word;
            std::memcpy(&word, m_at, 8);
            if (word & 0x8080808080808080ull)
                break;
            for (std::size_t i = 0; i < 8; ++i)
                out[done + i] = static_cast<T>(m_at[i]);
            m_at += 8;
            done += 8;
        }
        return done;
    }

    std::uint64_t next(std::size_t index)
    {
        if (m_at != m_end && *m_at < 0x80) // most values: one byte
            return *m_at++;
        // Far enough from the end for any varint: no bounds to check byte by byte.
        if (m_end - m_at >= 10) {
            std::uint64_t value = m_at[0] & 0x7fu;
            for (unsigned i = 1; i < 10; ++i) {
                const std::uint8_t byte = m_at[i];
                if (i == 9 && byte > 1)
                    throw Error("value " + std::to_string(index) + " of the column runs past 64 bits");
                value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
                if (byte < 0x80) {
                    m_at += i + 1;
                    return value;
                }
            }
            throw Error("value " + std::to_string(index) + " of the column runs past 64 bits");
        }
        std::uint64_t value = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (m_at == m_end)
                throw Error("the column ends after " + std::to_string(index) + " of its " + std::to_string(m_count) + " values");
            const std::uint8_t byte = *m_at++;
            if (shift == 63 && byte > 1)
                throw Error("value " + std::to_string(index) + " of the column runs past 64 bits");
            value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
            if (byte < 0x80)
                return value;
        }
    }

    void finish() const
    {
        if (m_at != m_end)
            throw Error("the column holds " + std::to_string(m_end - m_at) + " bytes after its " + std::to_string(m_count)
                        + " values");
    }

private:
    const std::uint8_t *m_at;
    const std::uint8_t *m_end;
    std::size_t m_count;
};

} // namespace

void putUnsigned(std::span<const std::uint32_t> values, std::string &out)
{
    for (std::uint32_t value : values)
        putVarint(value, out);
}

void putSigned(std::span<const std::int64_t> values, std::string &out)
{
    for (std::int64_t value : values)
        putVarint(zigzag(value), out);
}

void putDifferences(std::span<const std::int64_t> values, std::int64_t previous, std::string &out)
{
    for (std::int64_t value : values) {
        // Wrapping arithmetic: any two values have a difference, and it reads back.
        putVarint(zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(value) - static_cast<std::uint64_t>(previous))),
                  out);
        previous = value;
    }
}

void putDifferences(std::span<const std::uint64_t> values, std::uint64_t previous, std::string &out)
{
    for (std::uint64_t value : values) {
        putVarint(zigzag(static_cast<std::int64_t>(value - previous)), out);
        previous = value;
    }
}

void getUnsigned(std::string_view bytes, std::span<std::uint32_t> out)
{
    Reader reader(bytes, out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        i += reader.runOfSmallValues(out.data() + i, i, out.size());
        if (i == out.size())
            break;
        const std::uint64_t value = reader.next(i);
        if (value > UINT32_MAX)
            throw Error("value " + std::to_string(i) + " of the column is " + std::to_string(value)
                        + ", more than an index can be");
        out[i] = static_cast<std::uint32_t>(value);
    }
    reader.finish();
}

void getSigned(std::string_view bytes, std::span<std::int64_t> out)
{
    Reader reader(bytes, out.size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = unzigzag(reader.next(i));
    reader.finish();
}

std::vector<std::int64_t> getAllSigned(std::string_view bytes)
{
    // Every varint ends in its one byte below 0x80.
    const auto count = static_cast<std::size_t>(
        std::count_if(bytes.begin(), bytes.end(), [](char c) { return static_cast<std::uint8_t>(c) < 0x80; }));
    std::vector<std::int64_t> values(count);
    getSigned(bytes, values);
    return values;
}

void getDifferences(std::string_view bytes, std::int64_t previous, std::span<std::int64_t> out)
{
    Reader reader(bytes, out.size());
    auto value = static_cast<std::uint64_t>(previous);
    for (std::size_t i = 0; i < out.size(); ++i) {
        value += static_cast<std::uint64_t>(unzigzag(reader.next(i)));
        out[i] = static_cast<std::int64_t>(value);
    }
    reader.finish();
}

void getDifferences(std::string_view bytes, std::uint64_t previous, std::span<std::uint64_t> out)
{
    Reader reader(bytes, out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        previous += static_cast<std::uint64_t>(unzigzag(reader.next(i)));
        out[i] = previous;
    }
    reader.finish();
}

} // namespace peaklens::columncodec
