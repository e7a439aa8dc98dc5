// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text from a trace or a path made safe to show and to write as JSON: bytes that are not
// UTF-8, control characters and those that reorder or hide text are written out visibly.

#include <string>
#include <string_view>

namespace peaklens {

// Valid UTF-8: every byte that does not start or continue a well-formed sequence (overlong
// forms and surrogates included) becomes the four characters \xHH. Valid input is returned
// unchanged, so applying it twice changes nothing.
std::string validUtf8(std::string_view text);

// validUtf8, then control characters (C0 with tab and line breaks, and DEL) as \xHH, and
// C1 controls and the characters that reorder, join or hide text (bidirectional
// embeddings, overrides and isolates, directional marks, zero-width characters, line and
// paragraph separators, the byte-order mark) as \u{HHHH}: what is shown is what the name
// holds, on one line.
std::string visibleText(std::string_view text);

// visibleText, keeping line breaks and tabs: for text of several lines.
std::string visibleLines(std::string_view text);

// Whether visibleText would return `text` unchanged.
bool isVisibleText(std::string_view text);

// The length of the well-formed UTF-8 sequence that starts at text[at], or 0 where the byte
// starts none (what validUtf8 writes as \xHH).
std::size_t utf8SequenceAt(std::string_view text, std::size_t at);

} // namespace peaklens
