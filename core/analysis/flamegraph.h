// SPDX-License-Identifier: Apache-2.0
#pragma once
// Live memory as an icicle: the blocks live at a moment nested by call stack (outermost
// frame at the top) or by module path. Nodes are in preorder with their subtree's end, so
// "is X under N" is an interval test; a node's bytes are its own plus its children's.

#include "core/trace/frameclassifier.h"
#include "core/trace/trace.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

struct LiveSet;

enum class FlameKeying : std::uint8_t {
    Stack,  // by call stack, the caller above its callees
    Module, // by module path (trace.layers), "(no layer)" for blocks outside every layer
};

struct FlameGraphOptions
{
    FlameKeying keying = FlameKeying::Stack;
    // Frames of the allocator, dispatcher, interpreter and system are left out unless
    // asked for: their bytes go to the nearest frame shown above them.
    bool machinery = false;
};

enum class FlameNodeType : std::uint8_t {
    Root,       // all live memory
    Frame,      // a stack frame (Stack keying)
    Synthetic,  // the one frame of memory no event places: from before the trace, or in a file's totals only
    Layer,      // a module (Module keying)
    NoStack,    // blocks whose allocation recorded no stack
    OnlyHidden, // blocks whose stack holds only frames that are left out
    NoLayer,    // blocks outside every layer
};

struct FlameNode
{
    static constexpr std::uint32_t kNone = UINT32_MAX;

    FlameNodeType type = FlameNodeType::Root;
    std::string label;                     // "forward (model.py:39)", "attn", "(no layer)", "all live memory"
    std::string detail;                    // the frame with its full path, the module's full path
    FrameKind frameKind = FrameKind::User; // Frame nodes only
    std::uint32_t key = kNone;             // frame index (Frame, Synthetic), layer index (Layer)
    std::int64_t bytes = 0;                // inclusive
    std::int64_t selfBytes = 0;            // of blocks whose path ends here
    std::int64_t blocks = 0;               // inclusive
    std::uint32_t depth = 0;               // the root is 0
    std::uint32_t parent = kNone;
    std::uint32_t end = 0; // one past the last node under this one
};

struct FlameGraph
{
    FlameGraphOptions options;
    Device device;
    std::int64_t timeNs = 0;
    // Preorder: nodes[0] is the root, a node's children follow it, largest first.
    std::vector<FlameNode> nodes;

    // True when `node` is `ancestor` or lies under it.
    bool isUnder(std::uint32_t node, std::uint32_t ancestor) const { return node >= ancestor && node < nodes[ancestor].end; }
    std::vector<std::uint32_t> children(std::uint32_t node) const;
    std::uint32_t maxDepth() const;
};

// The graph of the blocks allocated by `allocations` (indices of allocating events, as
// LiveSet::allocations holds them).
FlameGraph buildFlameGraph(const Trace &trace, const std::vector<std::size_t> &allocations,
                           const FlameGraphOptions &options = {});
// The graph of a live set (findPeaks' liveAtPeak, liveSetAt, liveSetAfter); its device and time.
FlameGraph buildFlameGraph(const Trace &trace, const LiveSet &live, const FlameGraphOptions &options = {});
// What is live on `device` after every event at or before `timeNs`.
FlameGraph buildFlameGraphAt(const Trace &trace, Device device, std::int64_t timeNs, const FlameGraphOptions &options = {});

// Which events lie under a node: an event belongs when its stack (Stack keying) or layer
// (Module keying) does, whether or not it is live at the graph's moment.
struct FlameSelection
{
    FlameKeying keying = FlameKeying::Stack;
    std::vector<bool> stacks; // by stack id
    std::vector<bool> layers; // by layer index
    bool noLayer = false;     // events outside every layer

    bool containsStack(std::uint32_t stack) const { return stack < stacks.size() && stacks[stack]; }
    bool containsLayer(std::uint32_t layer) const { return layer == kNoLayer ? noLayer : layer < layers.size() && layers[layer]; }
    bool containsEvent(const Trace &trace, std::size_t event) const;
};

FlameSelection selectUnder(const Trace &trace, const FlameGraph &graph, std::uint32_t node);

struct FlameSearch
{
    std::vector<std::uint32_t> nodes; // matching nodes, in preorder
    std::int64_t bytes = 0;           // under any match, each block once
    std::int64_t blocks = 0;
};

// Nodes whose label or detail holds `text`, ignoring ASCII case; empty text matches nothing.
FlameSearch searchFlameGraph(const FlameGraph &graph, std::string_view text);

} // namespace peaklens
