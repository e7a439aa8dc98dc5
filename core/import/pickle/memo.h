// SPDX-License-Identifier: Apache-2.0
#pragma once
// The unpickler's memo: slots as 4-byte codes into a pool of values. A streamed pickle
// memoizes every trace entry it holds; once read and released, those take their code alone.

#include "value.h"

#include <cstdint>
#include <vector>

namespace peaklens::pickle {

class Memo
{
public:
    // With `logWrites`, the slots written are remembered until release() (streaming).
    explicit Memo(bool logWrites)
        : m_logWrites(logWrites)
    {
    }

    std::size_t size() const { return m_codes.size(); }
    // False when the memo outgrows its codes (2^31 values, 2^32 slots).
    [[gnu::always_inline]] bool put(std::uint64_t index, const Value &value)
    {
        if (index == m_codes.size() && m_values.size() < kMoved && index < m_codes.capacity()) [[likely]]
            m_codes.push_back(kUnset); // MEMOIZE: the next slot
        else if (!makeSlot(index))
            return false;
        if (value.kind == Kind::Released) { // needs no room in the pool, nor a release
            m_codes[index] = kReleased;
            return true;
        }
        if (m_values.size() == m_values.capacity()) [[unlikely]]
            growPool();
        m_codes[index] = static_cast<std::uint32_t>(m_values.size());
        m_values.push_back(value);
        if (m_logWrites)
            m_log.push_back(static_cast<std::uint32_t>(index));
        return true;
    }
    // False when slot `index` was never stored.
    [[gnu::always_inline]] bool get(std::uint64_t index, Value &value) const
    {
        if (index >= m_codes.size()) [[unlikely]]
            return false;
        const std::uint32_t code = m_codes[index];
        if (code < kReleased) [[likely]] {
            value = m_values[code];
            return true;
        }
        value = Value::standIn(Kind::Released);
        return code == kReleased;
    }

    struct Mark
    {
        std::size_t log = 0;
        std::size_t values = 0;
        std::size_t slots = 0;
    };
    Mark mark() const { return {m_log.size(), m_values.size(), m_codes.size()}; }
    // Undoes what was stored since `mark`, when every slot stored since was a new one.
    void rollBack(const Mark &mark)
    {
        m_codes.resize(mark.slots);
        m_values.resize(mark.values);
        m_log.resize(mark.log);
    }

    // For the slots written since `mark`: containers from `firstContainer` on become what
    // standIn(container) gives, and the pool keeps only what those slots still hold.
    template<typename StandIn>
    void release(const Mark &mark, std::size_t firstContainer, StandIn standIn)
    {
        m_kept.clear();
        for (std::size_t i = mark.log; i < m_log.size(); ++i) {
            std::uint32_t &code = m_codes[m_log[i]];
            if (code >= kReleased || (code & kMoved) || code < mark.values)
                continue; // released, moved already, or stored before the mark
            Value value = m_values[code];
            if (value.isContainer() && value.container >= firstContainer)
                value = standIn(value);
            if (value.kind == Kind::Released) {
                code = kReleased;
            } else {
                code = kMoved | static_cast<std::uint32_t>(m_kept.size());
                m_kept.push_back(value);
            }
        }
        m_values.resize(mark.values);
        for (std::size_t i = mark.log; i < m_log.size(); ++i) {
            std::uint32_t &code = m_codes[m_log[i]];
            if (code < kReleased && (code & kMoved))
                code = static_cast<std::uint32_t>(mark.values + (code & ~kMoved));
        }
        m_values.insert(m_values.end(), m_kept.begin(), m_kept.end());
        m_log.resize(mark.log);
    }

private:
    // Growing, charged to the load: a byte of pickle (MEMOIZE) stores a value.
    bool makeSlot(std::uint64_t index);
    void growPool();

    // Codes: an index into m_values, or one of these. While release() moves values, the
    // index into m_kept with kMoved set.
    static constexpr std::uint32_t kUnset = UINT32_MAX;
    static constexpr std::uint32_t kReleased = UINT32_MAX - 1;
    static constexpr std::uint32_t kMoved = 1u << 31;

    bool m_logWrites;
    std::vector<std::uint32_t> m_codes;
    std::vector<Value> m_values;
    std::vector<std::uint32_t> m_log; // slots written, while logging
    std::vector<Value> m_kept;        // scratch for release()
};

} // namespace peaklens::pickle
