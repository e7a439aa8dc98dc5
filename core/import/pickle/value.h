// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain Python values decoded from a pickle (or from JSON): None, bool, int, float, str,
// bytes, list, tuple and dict, held in a Document's arenas. Strings point into the
// document's bytes; containers are shared, as pickle's memo shares them. A reader that
// streams a pickle releases containers once read, leaving stand-ins in the memo.

#include "core/import/filebytes.h"

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace peaklens::pickle {

enum class Kind : std::uint8_t {
    None,
    Bool,
    Int,
    UInt,
    Float,
    String,
    Bytes,
    List,
    Tuple,
    Dict,
    // Stand-ins for containers a streaming reader has read and released; `container` is an
    // index into that reader's own tables.
    Frame,    // a frame dict, read into the reader's frame table
    Frames,   // a list of frames, read as a call stack
    Released, // anything else: it can no longer be read
};

struct Value
{
    Kind kind = Kind::None;
    std::uint32_t size = 0; // string/bytes length
    union
    {
        std::int64_t integer = 0;      // Int and Bool
        std::uint64_t unsignedInteger; // UInt: values above INT64_MAX
        double real;
        const char *text;        // String, Bytes
        std::uint32_t container; // List, Tuple, Dict: index into Document::containers; Frame, Frames
    };

    bool isNone() const { return kind == Kind::None; }
    bool isString() const { return kind == Kind::String; }
    bool isInteger() const { return kind == Kind::Int || kind == Kind::UInt || kind == Kind::Bool; }
    bool isSequence() const { return kind == Kind::List || kind == Kind::Tuple; }
    bool isDict() const { return kind == Kind::Dict; }
    bool isContainer() const { return kind == Kind::List || kind == Kind::Tuple || kind == Kind::Dict; }
    bool isStandIn() const { return kind == Kind::Frame || kind == Kind::Frames || kind == Kind::Released; }
    std::string_view string() const { return {text, size}; }
    // Int, UInt and Bool as their 64 bits (addresses above 2^63 wrap, as in C).
    std::uint64_t bits() const { return kind == Kind::UInt ? unsignedInteger : static_cast<std::uint64_t>(integer); }
    double number() const
    {
        return kind == Kind::Float  ? real
               : kind == Kind::UInt ? static_cast<double>(unsignedInteger)
                                    : static_cast<double>(integer);
    }

    static Value none() { return {}; }
    static Value boolean(bool b)
    {
        Value v;
        v.kind = Kind::Bool;
        v.integer = b;
        return v;
    }
    static Value fromInt(std::int64_t i)
    {
        Value v;
        v.kind = Kind::Int;
        v.integer = i;
        return v;
    }
    static Value fromUInt(std::uint64_t u)
    {
        if (u <= static_cast<std::uint64_t>(INT64_MAX))
            return fromInt(static_cast<std::int64_t>(u));
        Value v;
        v.kind = Kind::UInt;
        v.unsignedInteger = u;
        return v;
    }
    static Value fromFloat(double d)
    {
        Value v;
        v.kind = Kind::Float;
        v.real = d;
        return v;
    }
    static Value fromText(Kind kind, const char *text, std::uint32_t size)
    {
        Value v;
        v.kind = kind;
        v.text = text;
        v.size = size;
        return v;
    }
    static Value fromContainer(Kind kind, std::uint32_t index)
    {
        Value v;
        v.kind = kind;
        v.container = index;
        return v;
    }
    static Value standIn(Kind kind, std::uint32_t index = 0) { return fromContainer(kind, index); }
};

// A document: the bytes strings point into, and every container's items (dicts as key,
// value, key, value...) in one arena. Containers grow by appending while they are built
// (a pickle fills them after creating them); seal() then makes each one contiguous. A
// streaming reader reads containers while the document is still growing, and releases
// those made since a watermark once it has read them.
class Document
{
public:
    FileBytes bytes;                      // the decoded file: pickle strings point here
    std::deque<std::string> ownedStrings; // strings decoded from JSON escapes point here
    Value root;
    std::size_t trailingBytes = 0; // after the pickle's STOP: ignored, and said so

    // Building. Throws Error when the document outgrows 32-bit indices.
    Value newContainer(Kind kind);
    void append(const Value &container, std::span<const Value> items);
    void seal();
    // Room for this many values, so the arena is not copied as it grows (untouched room
    // costs address space, not memory).
    void reserveValues(std::size_t count) { m_values.reserve(count); }

    // How far the arena reaches now; release() drops every container made since.
    struct Watermark
    {
        std::size_t values = 0;
        std::size_t containers = 0;
        std::size_t chunks = 0;
    };
    Watermark watermark() const { return {m_values.size(), m_containers.size(), m_chunks.size()}; }
    // The caller guarantees that nothing older than the mark holds a container made since,
    // and that no container older than the mark grew since.
    void release(const Watermark &mark);

    // Reading: at any time, though a container in several pieces is then joined in a copy
    // (valid until it grows again).
    std::span<const Value> items(const Value &container) const
    {
        const Span &span = m_containers[container.container];
        if (span.lastChunk != kNone) [[unlikely]]
            return joinedItems(container.container);
        return {m_values.data() + span.offset, span.size};
    }
    std::size_t itemCount(const Value &container) const { return m_containers[container.container].size; }
    // The value under a string key of a dict (the first, should the key repeat), or nullptr.
    const Value *find(const Value &dict, std::string_view key) const;
    // The same among a dict's items: key, value, key, value...
    static const Value *findIn(std::span<const Value> pairs, std::string_view key);
    // The string, or integer (as its 64 bits), under a key; the fallback when it is missing or
    // of another kind.
    std::string_view findString(const Value &dict, std::string_view key) const;
    std::int64_t findInteger(const Value &dict, std::string_view key, std::int64_t fallback = 0) const;
    std::size_t containerCount() const { return m_containers.size(); }

private:
    static constexpr std::uint32_t kNone = UINT32_MAX;
    struct Span
    {
        std::uint32_t offset = 0;
        std::uint32_t size = 0;
        std::uint32_t lastChunk = kNone; // while building: its newest chunk, when in several
    };
    struct Chunk // while building: a piece of a container's items in the arena
    {
        std::uint32_t offset;
        std::uint32_t size;
        std::uint32_t previous;
    };

    std::span<const Value> joinedItems(std::uint32_t container) const;
    std::vector<std::uint32_t> piecesOf(const Span &span) const; // its chunks, first to last

    std::vector<Value> m_values;
    std::vector<Span> m_containers;
    std::vector<Chunk> m_chunks;
    // Containers in several pieces read before seal(), joined.
    mutable std::unordered_map<std::uint32_t, std::vector<Value>> m_joined;
};

} // namespace peaklens::pickle
