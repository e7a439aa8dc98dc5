// SPDX-License-Identifier: Apache-2.0
#include "jsonscanner.h"

#include "core/error.h"

#include <cstring>

namespace peaklens {

void JsonScanner::fail(const std::string &problem) const
{
    if (m_pos >= m_text.size())
        throw ImportError(m_path, "is truncated: the JSON ends " + problem, m_text.size());
    throw ImportError(m_path, "is not valid JSON: " + problem, m_pos);
}

void JsonScanner::explainJsonError(std::string_view text, const std::string &path, const std::string &parserMessage)
{
    JsonScanner scanner(text, path);
    scanner.skipValue(); // throws "is truncated" when the text ends inside the value
    throw ImportError(path, "is not valid JSON: " + parserMessage + ".");
}

void JsonScanner::skipWhitespace()
{
    while (m_pos < m_text.size()
           && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' || m_text[m_pos] == '\r' || m_text[m_pos] == '\t'))
        ++m_pos;
}

void JsonScanner::expect(char c)
{
    if (!consume(c))
        fail(std::string("where '") + c + "' was expected");
}

bool JsonScanner::consume(char c)
{
    skipWhitespace();
    if (peek() != c)
        return false;
    ++m_pos;
    return true;
}

void JsonScanner::skipString()
{
    // At the opening quote.
    ++m_pos;
    while (true) {
        const void *hit = std::memchr(m_text.data() + m_pos, '"', m_text.size() - m_pos);
        if (!hit) {
            m_pos = m_text.size();
            fail("inside a string");
        }
        std::size_t quote = static_cast<std::size_t>(static_cast<const char *>(hit) - m_text.data());
        // An odd number of backslashes before the quote escapes it.
        std::size_t backslashes = 0;
        while (quote - backslashes > m_pos && m_text[quote - backslashes - 1] == '\\')
            ++backslashes;
        m_pos = quote + 1;
        if (backslashes % 2 == 0)
            return;
    }
}

std::string_view JsonScanner::readString()
{
    skipWhitespace();
    if (peek() != '"')
        fail("where a string was expected");
    const std::size_t start = m_pos + 1;
    skipString();
    return m_text.substr(start, m_pos - 1 - start);
}

void JsonScanner::skipValue()
{
    skipWhitespace();
    const char first = peek();
    if (first == '"') {
        skipString();
        return;
    }
    if (first != '{' && first != '[') {
        // A number or literal runs to the next delimiter.
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() && !std::strchr(",}] \t\r\n", m_text[m_pos]))
            ++m_pos;
        if (m_pos == start)
            fail("where a value was expected");
        return;
    }
    std::size_t depth = 0;
    do {
        if (m_pos >= m_text.size())
            fail("inside a value");
        const char c = m_text[m_pos];
        if (c == '"') {
            skipString();
            continue;
        }
        if (c == '{' || c == '[')
            ++depth;
        else if (c == '}' || c == ']')
            --depth;
        ++m_pos;
    } while (depth > 0);
}

} // namespace peaklens
