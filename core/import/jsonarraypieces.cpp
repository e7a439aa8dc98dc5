// SPDX-License-Identifier: Apache-2.0
#include "jsonarraypieces.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace peaklens {

namespace {

// The comma of the first "}, {" at or after `from`, looking no further than a megabyte.
std::size_t likelyBoundary(std::string_view text, std::size_t from)
{
    const std::size_t limit = std::min(text.size(), from + (1u << 20));
    const auto skipSpace = [&](std::size_t pos) {
        while (pos < limit && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\r' || text[pos] == '\t'))
            ++pos;
        return pos;
    };
    for (std::size_t pos = from; pos < limit; ++pos) {
        pos = text.find('}', pos);
        if (pos == std::string_view::npos || pos >= limit)
            break;
        const std::size_t comma = skipSpace(pos + 1);
        if (comma < limit && text[comma] == ',') {
            const std::size_t next = skipSpace(comma + 1);
            if (next < limit && text[next] == '{')
                return comma;
        }
    }
    return std::string_view::npos;
}

// Walks element by element from a piece's start to the first separator a piece's length
// on, or to the array's closing bracket (then `last`).
std::pair<std::size_t, bool> exactBoundary(JsonScanner &scanner, std::size_t pieceStart, std::size_t pieceBytes)
{
    scanner.setPosition(pieceStart + 1);
    while (true) {
        scanner.skipValue();
        scanner.skipWhitespace();
        const std::size_t separator = scanner.position();
        const char c = scanner.peek();
        if (c == ']')
            return {separator, true};
        if (c != ',')
            scanner.fail("between two array elements");
        if (separator - pieceStart >= pieceBytes)
            return {separator, false};
        scanner.setPosition(separator + 1);
    }
}

} // namespace

void readArrayInPieces(std::span<char> text, JsonScanner &scanner, std::size_t pieceBytes, const ArrayPieceReader &read)
{
    std::size_t pieceStart = scanner.position();
    scanner.setPosition(pieceStart + 1);
    if (scanner.consume(']'))
        return;
    const std::string_view view(text.data(), text.size());
    while (true) {
        const std::size_t guess = likelyBoundary(view, pieceStart + pieceBytes);
        if (guess != std::string_view::npos) {
            text[guess] = ']';
            const bool parsed = read(pieceStart, guess + 1 - pieceStart, false);
            text[guess] = parsed ? '[' : ',';
            if (parsed) {
                pieceStart = guess;
                continue;
            }
        }
        const auto [end, last] = exactBoundary(scanner, pieceStart, pieceBytes);
        if (!last)
            text[end] = ']';
        read(pieceStart, end + 1 - pieceStart, true);
        if (last) {
            scanner.setPosition(end + 1);
            return;
        }
        text[end] = '[';
        pieceStart = end;
    }
}

} // namespace peaklens
