// SPDX-License-Identifier: Apache-2.0
#pragma once
// Variable-length coding of integer columns, for event chunks stored compactly: each value
// as a LEB128 varint, signed ones zigzag-coded, and times and addresses as the difference
// from the value before them, so that the small steps of a sorted or clustered column take
// one or two bytes. Every read is bounds-checked: damaged bytes are an Error saying what is
// wrong, never a read past the end.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens::columncodec {

// Appends the values; a column of differences starts from `previous`.
void putUnsigned(std::span<const std::uint32_t> values, std::string &out);
void putSigned(std::span<const std::int64_t> values, std::string &out);
void putDifferences(std::span<const std::int64_t> values, std::int64_t previous, std::string &out);
// Addresses: differences modulo 2^64, so any two addresses have one.
void putDifferences(std::span<const std::uint64_t> values, std::uint64_t previous, std::string &out);

// Reads exactly out.size() values from the whole of `bytes`; throws Error when the bytes
// end early, a varint runs past 64 bits, a value does not fit, or bytes are left over.
void getUnsigned(std::string_view bytes, std::span<std::uint32_t> out);
void getSigned(std::string_view bytes, std::span<std::int64_t> out);
void getDifferences(std::string_view bytes, std::int64_t previous, std::span<std::int64_t> out);
void getDifferences(std::string_view bytes, std::uint64_t previous, std::span<std::uint64_t> out);
// All the signed values the bytes hold, however many: for lists that do not store their
// length (running totals, summary figures). Throws Error as getSigned does.
std::vector<std::int64_t> getAllSigned(std::string_view bytes);

} // namespace peaklens::columncodec
