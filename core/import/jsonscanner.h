// SPDX-License-Identifier: Apache-2.0
#pragma once
// A byte-level walker over JSON text that finds where values end without building
// anything: the Kineto importer uses it to step through the top-level object and to cut
// the (often gigabyte) traceEvents array into pieces simdjson parses one at a time.

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace peaklens {

// `text == literal`, compared as a few machine words: importers compare millions of keys
// and names with the ones they know.
template<std::size_t N>
bool equalsLiteral(std::string_view text, const char (&literal)[N])
{
    return text.size() == N - 1 && std::memcmp(text.data(), literal, N - 1) == 0;
}

class JsonScanner
{
public:
    JsonScanner(std::string_view text, std::string path)
        : m_text(text)
        , m_path(std::move(path))
    {
    }

    std::size_t position() const { return m_pos; }
    void setPosition(std::size_t pos) { m_pos = pos; }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }

    void skipWhitespace();
    // Consumes `c` after whitespace; throws ImportError naming the offset when absent.
    void expect(char c);
    // Consumes `c` after whitespace when present.
    bool consume(char c);
    // A string without unescaping (keys of Kineto traces are plain ASCII).
    std::string_view readString();
    // Skips one value of any kind, nested as deep as it goes.
    void skipValue();

    [[noreturn]] void fail(const std::string &problem) const;

    // After a JSON parser refused `text`: throws ImportError saying it is truncated when
    // it ends inside a value, else that it is not valid JSON, with the parser's words.
    [[noreturn]] static void explainJsonError(std::string_view text, const std::string &path, const std::string &parserMessage);

private:
    void skipString();

    std::string_view m_text;
    std::string m_path;
    std::size_t m_pos = 0;
};

} // namespace peaklens
