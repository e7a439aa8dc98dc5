// SPDX-License-Identifier: Apache-2.0
#include "jsonwriter.h"

#include "core/trace/visibletext.h"

#include <charconv>
#include <cmath>

namespace peaklens {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Printable ASCII that JSON takes as it is: not a quote, a backslash or a control character.
constexpr bool isPlain(unsigned char byte)
{
    return byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
}

template<typename Number>
void appendNumber(std::string &out, Number number)
{
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, number).ptr;
    out.append(buffer, end);
}

} // namespace

JsonWriter::JsonWriter(int indent)
    : m_indent(indent)
{
}

void JsonWriter::beforeItem()
{
    if (m_afterKey) {
        m_afterKey = false;
        return;
    }
    if (m_levels.empty())
        return;
    Level &level = m_levels.back();
    if (!level.empty)
        m_out += ',';
    if (level.oneLine) {
        if (!level.empty)
            m_out += ' ';
    } else if (m_indent >= 0) {
        m_out += '\n';
        m_out.append(m_levels.size() * static_cast<std::size_t>(m_indent), ' ');
    }
    level.empty = false;
}

void JsonWriter::beginContainer(char open, bool oneLine)
{
    beforeItem();
    m_out += open;
    // Inside a container laid on one line, everything is.
    m_levels.push_back({oneLine || (!m_levels.empty() && m_levels.back().oneLine), true});
}

void JsonWriter::endContainer(char close)
{
    const Level level = m_levels.back();
    m_levels.pop_back();
    if (!level.empty && !level.oneLine && m_indent >= 0) {
        m_out += '\n';
        m_out.append(m_levels.size() * static_cast<std::size_t>(m_indent), ' ');
    }
    m_out += close;
}

JsonWriter &JsonWriter::beginObject(bool oneLine)
{
    beginContainer('{', oneLine);
    return *this;
}

JsonWriter &JsonWriter::endObject()
{
    endContainer('}');
    return *this;
}

JsonWriter &JsonWriter::beginArray(bool oneLine)
{
    beginContainer('[', oneLine);
    return *this;
}

JsonWriter &JsonWriter::endArray()
{
    endContainer(']');
    return *this;
}

JsonWriter &JsonWriter::key(std::string_view name)
{
    beforeItem();
    appendString(name);
    m_out += m_indent >= 0 || m_levels.back().oneLine ? ": " : ":";
    m_afterKey = true;
    return *this;
}

void JsonWriter::appendString(std::string_view text)
{
    m_out += '"';
    for (std::size_t i = 0; i < text.size();) {
        // Most text needs no escape: its runs of printable ASCII are copied whole.
        std::size_t plain = i;
        while (plain < text.size() && isPlain(static_cast<unsigned char>(text[plain])))
            ++plain;
        m_out.append(text.substr(i, plain - i));
        i = plain;
        if (i == text.size())
            break;
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte >= 0x80) {
            if (const std::size_t length = utf8SequenceAt(text, i)) {
                m_out.append(text.substr(i, length));
                i += length;
            } else { // written as validUtf8 writes it, its backslash escaped
                m_out += "\\\\x";
                m_out += "0123456789ABCDEF"[byte >> 4];
                m_out += "0123456789ABCDEF"[byte & 0xF];
                ++i;
            }
            continue;
        }
        switch (byte) {
        case '"':
            m_out += "\\\"";
            break;
        case '\\':
            m_out += "\\\\";
            break;
        case '\b':
            m_out += "\\b";
            break;
        case '\f':
            m_out += "\\f";
            break;
        case '\n':
            m_out += "\\n";
            break;
        case '\r':
            m_out += "\\r";
            break;
        case '\t':
            m_out += "\\t";
            break;
        default:
            m_out += "\\u00";
            m_out += kHex[byte >> 4];
            m_out += kHex[byte & 0xF];
        }
        ++i;
    }
    m_out += '"';
}

JsonWriter &JsonWriter::value(std::string_view text)
{
    beforeItem();
    appendString(text);
    return *this;
}

JsonWriter &JsonWriter::value(std::int64_t number)
{
    beforeItem();
    appendNumber(m_out, number);
    return *this;
}

JsonWriter &JsonWriter::value(std::uint64_t number)
{
    beforeItem();
    appendNumber(m_out, number);
    return *this;
}

JsonWriter &JsonWriter::value(double number)
{
    if (!std::isfinite(number))
        return null();
    beforeItem();
    const std::size_t start = m_out.size();
    appendNumber(m_out, number);
    // A whole number still reads as a double.
    if (m_out.find_first_of(".e", start) == std::string::npos)
        m_out += ".0";
    return *this;
}

JsonWriter &JsonWriter::value(bool flag)
{
    beforeItem();
    m_out += flag ? "true" : "false";
    return *this;
}

JsonWriter &JsonWriter::null()
{
    beforeItem();
    m_out += "null";
    return *this;
}

} // namespace peaklens
