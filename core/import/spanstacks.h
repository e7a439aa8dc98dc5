// SPDX-License-Identifier: Apache-2.0
#pragma once
// Call stacks for traces that record calls as spans rather than stacks (Kineto with
// with_stack=True: python_function spans "model.py(39): forward" and cpu_op spans
// "aten::mm" per thread): an allocation's stack is the spans open around it on its thread,
// outermost first, so its site can be named like a snapshot's.

#include "core/trace/memoryevents.h"
#include "core/trace/stacktable.h"

#include <map>
#include <string_view>
#include <vector>

namespace peaklens {

class SpanStacks
{
public:
    // A python_function span's name: "path/file.py(LINE): function"; other names (built-ins,
    // operators) are frames of that name.
    static Frame frameOf(std::string_view name);

    void add(std::int32_t thread, std::int64_t beginNs, std::int64_t endNs, std::uint32_t frame);
    bool empty() const { return m_spans.empty(); }
    // Gives each event of `thread` (sorted by time) the stack of the spans around it; the
    // spans' times are `offsetNs` behind the events' (Kineto's baseTimeNanoseconds).
    void assign(std::int32_t thread, std::vector<MemoryEvent> &events, StackTable &stacks, std::int64_t offsetNs = 0);

private:
    struct Span
    {
        std::int64_t beginNs;
        std::int64_t endNs;
        std::uint32_t frame;
    };
    std::map<std::int32_t, std::vector<Span>> m_spans;
};

} // namespace peaklens
