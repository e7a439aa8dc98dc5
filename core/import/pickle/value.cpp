#include "value.h"

#include "core/error.h"

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

void Document::seal()
{
    std::vector<std::uint32_t> pieces;
    for (Span &span : m_containers) {
        if (span.lastChunk == kNone)
            continue; // one run already
        // Several pieces: copy them, in order, to the end of the arena.
        pieces.clear();
        for (std::uint32_t c = span.lastChunk; c != kNone; c = m_chunks[c].previous)
            pieces.push_back(c);
        if (m_values.size() + span.size >= kNone)
            throw Error("The document holds more values than PeakLens can load.");
        const auto offset = static_cast<std::uint32_t>(m_values.size());
        m_values.reserve(m_values.size() + span.size);
        for (auto c = pieces.rbegin(); c != pieces.rend(); ++c) {
            const Chunk &chunk = m_chunks[*c];
            for (std::uint32_t k = 0; k < chunk.size; ++k)
                m_values.push_back(m_values[chunk.offset + k]); // reserved: no reallocation
        }
        span.offset = offset;
        span.lastChunk = kNone;
    }
    m_chunks.clear();
    m_chunks.shrink_to_fit();
}

const Value *Document::find(const Value &dict, std::string_view key) const
{
    if (!dict.isDict())
        return nullptr;
    const std::span<const Value> pairs = items(dict);
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (pairs[i].isString() && pairs[i].string() == key)
            return &pairs[i + 1];
    }
    return nullptr;
}

} // namespace peaklens::pickle
