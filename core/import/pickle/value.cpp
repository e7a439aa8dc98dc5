// SPDX-License-Identifier: Apache-2.0
#include "value.h"

#include "core/error.h"

#include <algorithm>

namespace peaklens::pickle {

Value Document::newContainer(Kind kind)
{
    if (m_containers.size() >= kNone)
        throw Error("The document holds more containers than PeakLens can load.");
    m_containers.push_back({});
    return Value::fromContainer(kind, static_cast<std::uint32_t>(m_containers.size() - 1));
}

void Document::append(const Value &container, std::span<const Value> items)
{
    if (items.empty())
        return;
    if (m_values.size() + items.size() >= kNone)
        throw Error("The document holds more values than PeakLens can load.");
    Span &span = m_containers[container.container];
    if (span.lastChunk != kNone && !m_joined.empty())
        m_joined.erase(container.container); // its joined copy is out of date
    const auto end = static_cast<std::uint32_t>(m_values.size());
    m_values.insert(m_values.end(), items.begin(), items.end());
    const auto count = static_cast<std::uint32_t>(items.size());
    // Most containers are filled in one run: [offset, offset + size) needs no chunks.
    if (span.size == 0) {
        span.offset = end;
        span.size = count;
        return;
    }
    if (span.lastChunk == kNone) {
        if (span.offset + span.size == end) {
            span.size += count;
            return;
        }
        m_chunks.push_back({span.offset, span.size, kNone}); // the run so far becomes the first chunk
        span.lastChunk = static_cast<std::uint32_t>(m_chunks.size() - 1);
    }
    span.size += count;
    Chunk &last = m_chunks[span.lastChunk];
    if (last.offset + last.size == end) {
        last.size += count;
        return;
    }
    m_chunks.push_back({end, count, span.lastChunk});
    span.lastChunk = static_cast<std::uint32_t>(m_chunks.size() - 1);
}

void Document::release(const Watermark &mark)
{
    m_values.resize(mark.values);
    m_containers.resize(mark.containers);
    m_chunks.resize(mark.chunks);
    std::erase_if(m_joined, [&](const auto &joined) { return joined.first >= mark.containers; });
}

std::span<const Value> Document::joinedItems(std::uint32_t container) const
{
    auto [joined, inserted] = m_joined.try_emplace(container);
    if (inserted) {
        joined->second.reserve(m_containers[container].size);
        for (const std::uint32_t c : piecesOf(m_containers[container])) {
            const Chunk &chunk = m_chunks[c];
            joined->second.insert(joined->second.end(), m_values.begin() + chunk.offset,
                                  m_values.begin() + chunk.offset + chunk.size);
        }
    }
    return joined->second;
}

std::vector<std::uint32_t> Document::piecesOf(const Span &span) const
{
    std::vector<std::uint32_t> pieces;
    for (std::uint32_t c = span.lastChunk; c != kNone; c = m_chunks[c].previous)
        pieces.push_back(c);
    std::reverse(pieces.begin(), pieces.end());
    return pieces;
}

void Document::seal()
{
    m_joined.clear();
    for (Span &span : m_containers) {
        if (span.lastChunk == kNone)
            continue; // one run already
        // Several pieces: copy them, in order, to the end of the arena.
        const std::vector<std::uint32_t> pieces = piecesOf(span);
        if (m_values.size() + span.size >= kNone)
            throw Error("The document holds more values than PeakLens can load.");
        const auto offset = static_cast<std::uint32_t>(m_values.size());
        m_values.reserve(m_values.size() + span.size);
        for (const std::uint32_t c : pieces) {
            const Chunk &chunk = m_chunks[c];
            for (std::uint32_t k = 0; k < chunk.size; ++k)
                m_values.push_back(m_values[chunk.offset + k]); // reserved: no reallocation
        }
        span.offset = offset;
        span.lastChunk = kNone;
    }
    m_chunks.clear();
    m_chunks.shrink_to_fit();
}

std::string_view Document::findString(const Value &dict, std::string_view key) const
{
    const Value *value = find(dict, key);
    return value && value->isString() ? value->string() : std::string_view();
}

std::int64_t Document::findInteger(const Value &dict, std::string_view key, std::int64_t fallback) const
{
    const Value *value = find(dict, key);
    return value && value->isInteger() ? static_cast<std::int64_t>(value->bits()) : fallback;
}

const Value *Document::find(const Value &dict, std::string_view key) const
{
    return dict.isDict() ? findIn(items(dict), key) : nullptr;
}

const Value *Document::findIn(std::span<const Value> pairs, std::string_view key)
{
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (pairs[i].isString() && pairs[i].string() == key)
            return &pairs[i + 1];
    }
    return nullptr;
}

} // namespace peaklens::pickle
