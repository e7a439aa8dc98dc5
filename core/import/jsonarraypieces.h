// SPDX-License-Identifier: Apache-2.0
#pragma once
// Cuts a JSON array (a Kineto trace's traceEvents, often gigabytes) into pieces of a few
// megabytes at element boundaries, each a whole array a JSON parser reads alone: the comma
// after a piece becomes its closing ']' while it is read, then the opening '[' of the
// next piece. A boundary is first guessed from the text ("}, {"); a guess inside a string
// or a nested value cannot parse, and the piece is then cut exactly with the scanner.

#include "jsonscanner.h"

#include <functional>
#include <span>

namespace peaklens {

// Reads one piece, text[offset, offset + length): returns false when a piece cut at a
// guessed boundary (exact false) does not parse; a piece cut exactly must parse, or the
// reader throws.
using ArrayPieceReader = std::function<bool(std::size_t offset, std::size_t length, bool exact)>;

// `text` is the whole document, and writable: each comma between two pieces is left as
// the '[' of the next. `scanner` stands at the array's '['; afterwards, after its ']'.
void readArrayInPieces(std::span<char> text, JsonScanner &scanner, std::size_t pieceBytes, const ArrayPieceReader &read);

} // namespace peaklens
