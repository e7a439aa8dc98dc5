// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON text written as it goes, in the order given: no tree of the whole answer is built.
// Valid whatever bytes a trace holds: a string's bytes that are not UTF-8 are written as
// the four characters \xHH (as validUtf8 writes them), so that readers see them and parsers
// accept the text. Laid out as nlohmann's dump lays it out: members on lines of their own,
// indented by `indent` spaces per level, or all on one line with -1; a container begun
// oneLine keeps its members on one line ({"a": 1, "b": 2}), for long lists of small rows.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

class JsonWriter
{
public:
    explicit JsonWriter(int indent = 2);

    JsonWriter &beginObject(bool oneLine = false);
    JsonWriter &endObject();
    JsonWriter &beginArray(bool oneLine = false);
    JsonWriter &endArray();
    // The next member's key, inside an object; its value follows.
    JsonWriter &key(std::string_view name);

    JsonWriter &value(std::string_view text);
    JsonWriter &value(const char *text) { return value(std::string_view(text)); }
    JsonWriter &value(const std::string &text) { return value(std::string_view(text)); }
    JsonWriter &value(std::int64_t number);
    JsonWriter &value(std::uint64_t number);
    JsonWriter &value(int number) { return value(static_cast<std::int64_t>(number)); }
    JsonWriter &value(std::uint32_t number) { return value(static_cast<std::uint64_t>(number)); }
    // The shortest text that reads back as the same double; null for NaN and infinities.
    JsonWriter &value(double number);
    JsonWriter &value(bool flag);
    JsonWriter &null();
    template<typename T>
    JsonWriter &value(const std::optional<T> &maybe)
    {
        return maybe ? value(*maybe) : null();
    }
    // key(name).value(v), the common case.
    template<typename T>
    JsonWriter &member(std::string_view name, const T &v)
    {
        return key(name).value(v);
    }

    // The text so far; complete once every container begun has ended.
    const std::string &text() const { return m_out; }
    std::string take() { return std::move(m_out); }

private:
    struct Level
    {
        bool oneLine = false;
        bool empty = true;
    };
    // Before a value or a key: the separator and the line break its container asks for.
    void beforeItem();
    void beginContainer(char open, bool oneLine);
    void endContainer(char close);
    void appendString(std::string_view text);

    int m_indent;
    std::string m_out;
    std::vector<Level> m_levels;
    bool m_afterKey = false;
};

} // namespace peaklens
