// SPDX-License-Identifier: Apache-2.0
#pragma once
// Interned stack frames and call stacks. A stack is a node in a prefix tree: its parent
// is the same stack without its innermost frame. Node 0 is the empty stack.

#include "addressmap.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace peaklens {

// One-frame stacks for memory whose source names no allocation site: blocks that existed
// before the trace began, and memory a trace's running totals hold but its events miss.
inline constexpr std::string_view kBeforeTrace = "(allocated before the trace began)";
inline constexpr std::string_view kTotalsOnly = "(in the trace's totals, in none of its events)";

// What a snapshot's trace entry says beside its frames, kept as the innermost frame of its
// stack: Frame{value, one of these as the file, 0}. compile_context names the torch.compile
// graph that allocated ("0/0"); user_metadata is what torch.cuda.memory._set_memory_metadata
// set on the allocating thread.
inline constexpr std::string_view kCompileContextFile = "(compile context)";
inline constexpr std::string_view kUserMetadataFile = "(user metadata)";

struct Frame
{
    std::string function;
    std::string file;
    std::int32_t line = 0;

    bool operator==(const Frame &) const = default;
};

struct StackNode
{
    std::uint32_t parent = 0; // the calling stack
    std::uint32_t frame = 0;  // index into frames(), the innermost frame of this stack

    bool operator==(const StackNode &) const = default;
};

class StackTable
{
public:
    static constexpr std::uint32_t kEmptyStack = 0;

    StackTable();

    std::uint32_t internFrame(const Frame &frame);
    std::uint32_t internStack(std::uint32_t parent, std::uint32_t frame);
    // Frames given outermost first (as Python prints a traceback).
    std::uint32_t internStack(const std::vector<Frame> &outermostFirst);

    const std::vector<Frame> &frames() const { return m_frames; }
    const std::vector<StackNode> &nodes() const { return m_nodes; }
    std::size_t stackCount() const { return m_nodes.size(); }

    // Frame indices of a stack, innermost first.
    std::vector<std::uint32_t> framesOf(std::uint32_t stack) const;

    bool operator==(const StackTable &other) const { return m_frames == other.m_frames && m_nodes == other.m_nodes; }

private:
    struct FrameHash
    {
        std::size_t operator()(const Frame &frame) const;
    };

    std::vector<Frame> m_frames;
    std::vector<StackNode> m_nodes;
    std::unordered_map<Frame, std::uint32_t, FrameHash> m_frameIds;
    AddressMap<std::uint32_t> m_nodeIds; // (parent << 32 | frame) -> node
};

} // namespace peaklens
