// SPDX-License-Identifier: Apache-2.0
#include "stacktable.h"

#include "loadbudget.h"
#include "visibletext.h"

#include <functional>

namespace peaklens {

namespace {
// A stack node and its entry in the index, charged to the load in steps.
constexpr std::size_t kNodeBytes = 48;
constexpr std::size_t kChargeStep = 65536;
} // namespace

StackTable::StackTable()
{
    m_nodes.push_back({}); // the empty stack
}

std::size_t StackTable::FrameHash::operator()(const Frame &frame) const
{
    std::size_t h = std::hash<std::string>()(frame.function);
    h = h * 31 + std::hash<std::string>()(frame.file);
    return h * 31 + static_cast<std::size_t>(frame.line);
}

std::uint32_t StackTable::internFrame(const Frame &frame)
{
    auto [it, inserted] = m_frameIds.try_emplace(frame, static_cast<std::uint32_t>(m_frames.size()));
    if (inserted) { // what a stack shows is readable, whatever bytes the file held
        LoadBudget::charge(2 * (frame.function.size() + frame.file.size() + sizeof(Frame)), "stack frames");
        m_frames.push_back({visibleText(frame.function), visibleText(frame.file), frame.line});
    }
    return it->second;
}

std::uint32_t StackTable::internStack(std::uint32_t parent, std::uint32_t frame)
{
    const std::uint64_t key = static_cast<std::uint64_t>(parent) << 32 | frame;
    const auto [held, inserted] = m_nodeIds.tryEmplace(key, static_cast<std::uint32_t>(m_nodes.size()));
    const std::uint32_t node = *held;
    if (inserted) {
        if (m_nodes.size() % kChargeStep == 0)
            LoadBudget::charge(kChargeStep * kNodeBytes, "call stacks");
        m_nodes.push_back({parent, frame});
    }
    return node;
}

std::uint32_t StackTable::internStack(const std::vector<Frame> &outermostFirst)
{
    std::uint32_t stack = kEmptyStack;
    for (const Frame &frame : outermostFirst)
        stack = internStack(stack, internFrame(frame));
    return stack;
}

std::vector<std::uint32_t> StackTable::framesOf(std::uint32_t stack) const
{
    std::vector<std::uint32_t> result;
    // A parent always has a smaller index than its child, which also ends the walk on bad input.
    while (stack != kEmptyStack && stack < m_nodes.size()) {
        result.push_back(m_nodes[stack].frame);
        const std::uint32_t parent = m_nodes[stack].parent;
        if (parent >= stack)
            break;
        stack = parent;
    }
    return result;
}

} // namespace peaklens
