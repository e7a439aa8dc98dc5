// SPDX-License-Identifier: Apache-2.0
#include "spanstacks.h"

#include <algorithm>
#include <charconv>

namespace peaklens {

Frame SpanStacks::frameOf(std::string_view name)
{
    const auto open = name.find('(');
    const auto close = name.find("): ");
    if (open == std::string_view::npos || close == std::string_view::npos || close < open || name.starts_with("<built-in"))
        return Frame{std::string(name), "", 0};
    std::int32_t line = 0;
    const auto [end, error] = std::from_chars(name.data() + open + 1, name.data() + close, line);
    if (error != std::errc() || end != name.data() + close)
        return Frame{std::string(name), "", 0};
    return Frame{std::string(name.substr(close + 3)), std::string(name.substr(0, open)), line};
}

void SpanStacks::add(std::int32_t thread, std::int64_t beginNs, std::int64_t endNs, std::uint32_t frame)
{
    m_spans[thread].push_back({beginNs, endNs, frame});
}

void SpanStacks::assign(std::int32_t thread, std::vector<MemoryEvent> &events, StackTable &stacks, std::int64_t offsetNs)
{
    auto found = m_spans.find(thread);
    if (found == m_spans.end())
        return;
    std::vector<Span> &spans = found->second;
    // Outer spans first: by begin, the longer first when two begin together.
    std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
        return a.beginNs < b.beginNs || (a.beginNs == b.beginNs && a.endNs > b.endNs);
    });
    struct Open
    {
        std::int64_t endNs;
        std::uint32_t stack;
    };
    std::vector<Open> open;
    std::size_t next = 0;
    for (MemoryEvent &event : events) {
        const std::int64_t t = event.timeNs - offsetNs;
        for (; next < spans.size() && spans[next].beginNs <= t; ++next) {
            while (!open.empty() && open.back().endNs <= spans[next].beginNs)
                open.pop_back();
            const std::uint32_t parent = open.empty() ? StackTable::kEmptyStack : open.back().stack;
            open.push_back({spans[next].endNs, stacks.internStack(parent, spans[next].frame)});
        }
        while (!open.empty() && open.back().endNs <= t)
            open.pop_back();
        if (event.stack == StackTable::kEmptyStack && !open.empty())
            event.stack = open.back().stack;
    }
    m_spans.erase(found);
}

} // namespace peaklens
