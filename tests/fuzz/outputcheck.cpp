// SPDX-License-Identifier: Apache-2.0
#include "outputcheck.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace peaklens::fuzz {

namespace {

// The problem, where it is, and the text around it with every byte shown.
std::string at(std::string_view text, std::size_t offset, const std::string &problem)
{
    static constexpr char kDigits[] = "0123456789ABCDEF";
    const std::size_t begin = offset > 60 ? offset - 60 : 0;
    std::string context;
    for (std::size_t i = begin; i < std::min(text.size(), offset + 60); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (i == offset)
            context += "[HERE]";
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            context += static_cast<char>(c);
        } else {
            context += "\\x";
            context += kDigits[c >> 4];
            context += kDigits[c & 15];
        }
    }
    return problem + " at byte " + std::to_string(offset) + ": " + context;
}

std::string hex(std::uint32_t value)
{
    static constexpr char kDigits[] = "0123456789ABCDEF";
    std::string out;
    for (int shift = 20; shift >= 0; shift -= 4) {
        if (out.empty() && (value >> shift) == 0 && shift > 12)
            continue;
        out += kDigits[(value >> shift) & 0xF];
    }
    return out;
}

// The code point starting at `text[i]` and its length in bytes; length 0 where the bytes
// are not the shortest well-formed encoding of a scalar value.
std::pair<std::uint32_t, std::size_t> decodeAt(std::string_view text, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
    const std::uint8_t lead = byte(i);
    std::size_t length;
    std::uint32_t point;
    if (lead < 0x80)
        return {lead, 1};
    if ((lead & 0xE0) == 0xC0) {
        length = 2;
        point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        point = lead & 0x07;
    } else {
        return {0, 0};
    }
    if (i + length > text.size())
        return {0, 0};
    for (std::size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80)
            return {0, 0};
        point = point << 6 | (byte(i + k) & 0x3F);
    }
    static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (point < kSmallest[length] || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF))
        return {0, 0};
    return {point, length};
}

std::string textProblem(std::string_view text, bool visibleOnly)
{
    for (std::size_t i = 0; i < text.size();) {
        const auto [point, length] = decodeAt(text, i);
        if (length == 0)
            return at(text, i, "invalid UTF-8");
        if (visibleOnly) {
            const bool control = (point < 0x20 && point != '\t' && point != '\n' && point != '\r') || point == 0x7F
                                 || (point >= 0x80 && point <= 0x9F);
            const bool reorders = (point >= 0x202A && point <= 0x202E) || (point >= 0x2066 && point <= 0x2069) || point == 0x200E
                                  || point == 0x200F || point == 0x061C;
            if (control || reorders)
                return at(text, i, "U+" + hex(point));
        }
        i += length;
    }
    return {};
}

bool isNameStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

bool isNameChar(char c)
{
    return isNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Reads XML by hand: enough of the grammar for what the report writers emit.
class MarkupReader
{
public:
    explicit MarkupReader(std::string_view text)
        : m_text(text)
    {
    }

    std::string problem()
    {
        if (m_text.starts_with("<!DOCTYPE")) {
            const std::size_t end = m_text.find('>');
            if (end == std::string_view::npos)
                return at(m_text, 0, "an unterminated DOCTYPE");
            m_pos = end + 1;
        }
        std::vector<std::string_view> open;
        int roots = 0;
        while (m_pos < m_text.size()) {
            if (m_text[m_pos] != '<') {
                const std::size_t end = std::min(m_text.find('<', m_pos), m_text.size());
                const std::string_view text = m_text.substr(m_pos, end - m_pos);
                if (open.empty() && !std::all_of(text.begin(), text.end(), isSpace))
                    return at(m_text, m_pos, "text outside the root element");
                if (std::string problem = references(text, m_pos); !problem.empty())
                    return problem;
                if (const std::size_t cdataEnd = text.find("]]>"); cdataEnd != std::string_view::npos)
                    return at(m_text, m_pos + cdataEnd, "\"]]>\" in text");
                m_pos = end;
                continue;
            }
            if (m_text.substr(m_pos).starts_with("<!--")) {
                const std::size_t end = m_text.find("-->", m_pos + 4);
                const bool bad = end == std::string_view::npos
                                 || m_text.substr(m_pos + 4, end - m_pos - 4).find("--") != std::string_view::npos;
                if (bad)
                    return at(m_text, m_pos, "a bad comment");
                m_pos = end + 3;
                continue;
            }
            const std::size_t tagStart = m_pos;
            const bool closing = m_text.substr(m_pos).starts_with("</");
            m_pos += closing ? 2 : 1;
            const std::string_view name = readName();
            if (name.empty())
                return at(m_text, tagStart, "'<' that starts no tag");
            if (closing) {
                skipSpace();
                if (!consume('>'))
                    return at(m_text, m_pos, "a bad closing tag");
                if (open.empty() || open.back() != name)
                    return at(m_text, tagStart,
                              "</" + std::string(name) + "> closes " + (open.empty() ? "nothing" : std::string(open.back())));
                open.pop_back();
                continue;
            }
            if (open.empty() && ++roots > 1)
                return at(m_text, tagStart, "a second root element");
            std::set<std::string_view> attributes;
            while (true) {
                const bool spaced = skipSpace();
                if (consume('>')) {
                    open.push_back(name);
                    break;
                }
                if (m_text.substr(m_pos).starts_with("/>")) {
                    m_pos += 2;
                    break;
                }
                const std::size_t attributeStart = m_pos;
                const std::string_view attribute = readName();
                if (!spaced || attribute.empty())
                    return at(m_text, attributeStart, "a bad attribute in <" + std::string(name) + ">");
                if (!attributes.insert(attribute).second)
                    return at(m_text, attributeStart, "attribute " + std::string(attribute) + " given twice");
                skipSpace();
                if (!consume('='))
                    return at(m_text, m_pos, "an attribute without a value");
                skipSpace();
                if (m_pos >= m_text.size() || (m_text[m_pos] != '"' && m_text[m_pos] != '\''))
                    return at(m_text, m_pos, "an attribute value without quotes");
                const char quote = m_text[m_pos++];
                const std::size_t end = m_text.find(quote, m_pos);
                if (end == std::string_view::npos)
                    return at(m_text, m_pos, "an unterminated attribute value");
                const std::string_view value = m_text.substr(m_pos, end - m_pos);
                if (const std::size_t lt = value.find('<'); lt != std::string_view::npos)
                    return at(m_text, m_pos + lt, "'<' in an attribute value");
                if (std::string problem = references(value, m_pos); !problem.empty())
                    return problem;
                m_pos = end + 1;
            }
        }
        if (!open.empty())
            return at(m_text, m_text.size(), "<" + std::string(open.back()) + "> is never closed");
        if (roots != 1)
            return at(m_text, 0, "no root element");
        return {};
    }

private:
    std::string_view readName()
    {
        const std::size_t start = m_pos;
        if (m_pos < m_text.size() && isNameStart(m_text[m_pos])) {
            while (m_pos < m_text.size() && isNameChar(m_text[m_pos]))
                ++m_pos;
        }
        return m_text.substr(start, m_pos - start);
    }

    bool skipSpace()
    {
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() && isSpace(m_text[m_pos]))
            ++m_pos;
        return m_pos > start;
    }

    bool consume(char c)
    {
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }

    // Every '&' must start &name; of a predefined entity, or a character reference to a
    // character XML allows.
    std::string references(std::string_view text, std::size_t offset) const
    {
        for (std::size_t amp = text.find('&'); amp != std::string_view::npos; amp = text.find('&', amp + 1)) {
            const std::size_t semicolon = text.find(';', amp);
            const std::string_view reference =
                text.substr(amp + 1, semicolon == std::string_view::npos ? 0 : semicolon - amp - 1);
            bool good =
                reference == "amp" || reference == "lt" || reference == "gt" || reference == "quot" || reference == "apos";
            if (!good && reference.size() > 1 && reference[0] == '#') {
                const bool hexadecimal = reference[1] == 'x';
                const std::string_view digits = reference.substr(hexadecimal ? 2 : 1);
                std::uint64_t point = 0;
                good = !digits.empty() && digits.size() <= 8;
                for (char c : digits) {
                    const int digit = c >= '0' && c <= '9'                  ? c - '0'
                                      : hexadecimal && c >= 'a' && c <= 'f' ? c - 'a' + 10
                                      : hexadecimal && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                                            : -1;
                    good = good && digit >= 0;
                    point = point * (hexadecimal ? 16 : 10) + static_cast<std::uint64_t>(std::max(digit, 0));
                }
                good = good
                       && (point == 0x9 || point == 0xA || point == 0xD || (point >= 0x20 && point <= 0xD7FF)
                           || (point >= 0xE000 && point <= 0xFFFD) || (point >= 0x10000 && point <= 0x10FFFF));
            }
            if (!good)
                return at(m_text, offset + amp, "'&' that starts no valid reference");
        }
        return {};
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
};

// One CSV record's fields, unquoted; `pos` moves past its line break. `problem` says
// where the record is malformed.
std::vector<std::string> readRecord(std::string_view csv, std::size_t &pos, std::string &problem)
{
    std::vector<std::string> fields;
    while (true) {
        std::string field;
        if (pos < csv.size() && csv[pos] == '"') {
            ++pos;
            while (true) {
                const std::size_t quote = csv.find('"', pos);
                if (quote == std::string_view::npos) {
                    problem = at(csv, pos, "an unterminated quoted field");
                    return fields;
                }
                field += csv.substr(pos, quote - pos);
                pos = quote + 1;
                if (pos < csv.size() && csv[pos] == '"') {
                    field += '"';
                    ++pos;
                    continue;
                }
                break;
            }
        } else {
            const std::size_t end = std::min(csv.find_first_of(",\n", pos), csv.size());
            field = csv.substr(pos, end - pos);
            if (const std::size_t bad = field.find_first_of("\"\r"); bad != std::string::npos) {
                problem = at(csv, pos + bad, "a quote or carriage return in an unquoted field");
                return fields;
            }
            pos = end;
        }
        fields.push_back(std::move(field));
        if (pos >= csv.size()) {
            problem = at(csv, pos, "a record without its line break");
            return fields;
        }
        if (csv[pos++] == '\n')
            return fields;
        if (csv[pos - 1] != ',') {
            problem = at(csv, pos - 1, "text after a quoted field");
            return fields;
        }
    }
}

} // namespace

std::string utf8Problem(std::string_view text)
{
    return textProblem(text, false);
}

std::string hiddenTextProblem(std::string_view text)
{
    return textProblem(text, true);
}

std::string markupProblem(std::string_view document)
{
    return MarkupReader(document).problem();
}

std::string jsonProblem(std::string_view json)
{
    return nlohmann::json::accept(json) ? std::string() : "text that does not parse as JSON";
}

std::string jsonReportProblem(std::string_view json, std::size_t runs)
{
    const auto parsed = nlohmann::json::parse(json, nullptr, false);
    if (parsed.is_discarded())
        return "text that does not parse as JSON";
    if (!parsed.contains("runs") || !parsed["runs"].is_array() || parsed["runs"].size() != runs)
        return "not one entry in \"runs\" per trace";
    return {};
}

std::string csvProblem(std::string_view csv)
{
    static const std::set<std::string, std::less<>> kTextColumns = {"trace",      "layer", "kind",     "strategy",
                                                                    "checkpoint", "site",  "location", "called_from"};
    std::size_t pos = 0;
    std::string problem;
    const std::vector<std::string> header = readRecord(csv, pos, problem);
    while (problem.empty() && pos < csv.size()) {
        const std::size_t start = pos;
        const std::vector<std::string> fields = readRecord(csv, pos, problem);
        if (!problem.empty())
            break;
        if (fields.size() != header.size())
            return at(csv, start,
                      "a record of " + std::to_string(fields.size()) + " fields under a header of "
                          + std::to_string(header.size()));
        for (std::size_t f = 0; f < fields.size(); ++f) {
            // The characters OWASP lists as starting a formula in some spreadsheet.
            if (kTextColumns.contains(header[f]) && !fields[f].empty()
                && std::string_view("=+-@\t\r").find(fields[f][0]) != std::string_view::npos)
                return at(csv, start, "the " + header[f] + " field \"" + fields[f].substr(0, 40) + "\" reads as a formula");
        }
    }
    return problem;
}

} // namespace peaklens::fuzz
