// SPDX-License-Identifier: Apache-2.0
#include "visibletext.h"

#include <cstdint>

namespace peaklens {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

// The length of the well-formed UTF-8 sequence at `text[at]` and its code point, or a
// length of 0 where the byte starts none.
std::pair<std::size_t, char32_t> decode(std::string_view text, std::size_t at)
{
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80)
        return {1, lead};
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF; // the range of the second byte
    char32_t point = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        point = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        point = lead & 0x0F;
        low = lead == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
        high = lead == 0xED ? 0x9F : 0xBF; // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        point = lead & 0x07;
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
    } else {
        return {0, 0};
    }
    if (at + length > text.size())
        return {0, 0};
    for (std::size_t i = 1; i < length; ++i) {
        const unsigned char next = byte(at + i);
        if (next < (i == 1 ? low : 0x80) || next > (i == 1 ? high : 0xBF))
            return {0, 0};
        point = point << 6 | (next & 0x3F);
    }
    return {length, point};
}

void appendByteEscape(std::string &out, unsigned char byte)
{
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
}

bool isControl(char32_t point, bool keepLines = false)
{
    if (keepLines && (point == '\n' || point == '\t'))
        return false;
    return point < 0x20 || point == 0x7F;
}

bool isHidden(char32_t point)
{
    return (point >= 0x80 && point <= 0x9F)        // C1 controls
           || point == 0x061C                      // Arabic letter mark
           || point == 0x180E                      // Mongolian vowel separator
           || (point >= 0x200B && point <= 0x200F) // zero-width characters, directional marks
           || (point >= 0x2028 && point <= 0x202E) // separators, embeddings and overrides
           || (point >= 0x2060 && point <= 0x2069) // word joiner, invisible operators, isolates
           || point == 0xFEFF;                     // byte-order mark, zero-width no-break space
}

template<typename Visit>
std::string rewrite(std::string_view text, Visit visit)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto [length, point] = decode(text, i);
        if (length == 0) {
            appendByteEscape(out, static_cast<unsigned char>(text[i]));
            ++i;
            continue;
        }
        visit(out, text.substr(i, length), point);
        i += length;
    }
    return out;
}

} // namespace

std::string validUtf8(std::string_view text)
{
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t length = decode(text, i).first;
        if (length == 0)
            break;
        i += length;
    }
    if (i == text.size())
        return std::string(text);
    return rewrite(text, [](std::string &out, std::string_view sequence, char32_t) { out += sequence; });
}

namespace {

bool showsAsItIs(std::string_view text, bool keepLines)
{
    for (std::size_t i = 0; i < text.size();) {
        const auto [length, point] = decode(text, i);
        if (length == 0 || isControl(point, keepLines) || isHidden(point))
            return false;
        i += length;
    }
    return true;
}

std::string shown(std::string_view text, bool keepLines)
{
    if (showsAsItIs(text, keepLines))
        return std::string(text);
    return rewrite(text, [keepLines](std::string &out, std::string_view sequence, char32_t point) {
        if (isControl(point, keepLines)) {
            appendByteEscape(out, static_cast<unsigned char>(point));
        } else if (isHidden(point)) {
            out += "\\u{";
            for (int shift = 12; shift >= 0; shift -= 4)
                out += kHex[(point >> shift) & 0xF];
            out += '}';
        } else {
            out += sequence;
        }
    });
}

} // namespace

bool isVisibleText(std::string_view text)
{
    return showsAsItIs(text, false);
}

std::string visibleText(std::string_view text)
{
    return shown(text, false);
}

std::string visibleLines(std::string_view text)
{
    return shown(text, true);
}

std::size_t utf8SequenceAt(std::string_view text, std::size_t at)
{
    return decode(text, at).first;
}

} // namespace peaklens
