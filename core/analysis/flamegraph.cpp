// SPDX-License-Identifier: Apache-2.0
#include "flamegraph.h"

#include "allocationsites.h"
#include "peakfinder.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace peaklens {

namespace {

constexpr std::string_view kRootLabel = "all live memory";
constexpr std::string_view kNoStackLabel = "(no stack)";
constexpr std::string_view kOnlyHiddenLabel = "(allocator and runtime frames only)";
constexpr std::string_view kNoLayerLabel = "(no layer)";

// The frames describeStack leaves out by default: what every stack shares.
bool isMachinery(FrameKind kind)
{
    return kind == FrameKind::Allocator || kind == FrameKind::Dispatcher || kind == FrameKind::Interpreter
           || kind == FrameKind::System;
}

// Memory from before the trace and corrections to a file's totals have a one-frame stack
// of their own, classified as the system's; they are shown all the same, for no frame
// above them would say where their bytes are.
bool isSyntheticFrame(const Frame &frame)
{
    return frame.file.empty() && (frame.function == kBeforeTrace || frame.function == kTotalsOnly);
}

class FrameKinds
{
public:
    explicit FrameKinds(const StackTable &stacks)
        : m_stacks(stacks)
        , m_kinds(stacks.frames().size())
        , m_known(stacks.frames().size(), false)
        , m_synthetic(stacks.frames().size(), false)
    {
    }

    FrameKind of(std::uint32_t frame)
    {
        if (!m_known[frame]) {
            const Frame &info = m_stacks.frames()[frame];
            m_kinds[frame] = classifyFrame(info);
            m_synthetic[frame] = isSyntheticFrame(info);
            m_known[frame] = true;
        }
        return m_kinds[frame];
    }

    bool synthetic(std::uint32_t frame)
    {
        of(frame);
        return m_synthetic[frame];
    }

    bool shown(std::uint32_t frame, bool machinery)
    {
        const FrameKind kind = of(frame);
        return machinery || m_synthetic[frame] || !isMachinery(kind);
    }

private:
    const StackTable &m_stacks;
    std::vector<FrameKind> m_kinds;
    std::vector<bool> m_known;
    std::vector<bool> m_synthetic;
};

// The tree as it is gathered: children by key, sorted and laid out in preorder at the end.
class FlameTree
{
public:
    FlameTree()
    {
        FlameNode root;
        root.label = std::string(kRootLabel);
        m_nodes.push_back({root, {}});
    }

    static constexpr std::uint32_t kRoot = 0;

    // The child of `parent` with this type and key, created with `make` if new.
    template<typename Make>
    std::uint32_t child(std::uint32_t parent, FlameNodeType type, std::uint32_t key, Make make)
    {
        const std::uint64_t id = (std::uint64_t(type) << 32) | key;
        if (const auto it = m_nodes[parent].children.find(id); it != m_nodes[parent].children.end())
            return it->second;
        FlameNode node = make();
        node.type = type;
        node.key = key;
        node.parent = parent;
        const auto index = static_cast<std::uint32_t>(m_nodes.size());
        m_nodes.push_back({std::move(node), {}});
        m_nodes[parent].children.emplace(id, index);
        return index;
    }

    void addBlock(std::uint32_t node, std::int64_t bytes)
    {
        m_nodes[node].node.selfBytes += bytes;
        ++m_nodes[node].selfBlocks;
    }

    std::vector<FlameNode> finish()
    {
        // Children come after their parents: sums run backwards.
        for (std::size_t i = m_nodes.size(); i-- > 0;) {
            Gathered &gathered = m_nodes[i];
            gathered.node.bytes += gathered.node.selfBytes;
            gathered.node.blocks += gathered.selfBlocks;
            if (i != kRoot) {
                FlameNode &parent = m_nodes[gathered.node.parent].node;
                parent.bytes += gathered.node.bytes;
                parent.blocks += gathered.node.blocks;
            }
        }
        std::vector<FlameNode> out;
        out.reserve(m_nodes.size());
        place(kRoot, FlameNode::kNone, 0, out);
        return out;
    }

private:
    struct Gathered
    {
        FlameNode node;
        std::map<std::uint64_t, std::uint32_t> children;
        std::int64_t selfBlocks = 0;
    };

    std::vector<std::uint32_t> sortedChildren(std::uint32_t index) const
    {
        std::vector<std::uint32_t> children;
        for (const auto &[id, child] : m_nodes[index].children)
            children.push_back(child);
        std::stable_sort(children.begin(), children.end(), [&](std::uint32_t a, std::uint32_t b) {
            const FlameNode &x = m_nodes[a].node, &y = m_nodes[b].node;
            return x.bytes != y.bytes ? x.bytes > y.bytes : x.label < y.label;
        });
        return children;
    }

    // Preorder without recursion: stacks run hundreds of frames deep.
    void place(std::uint32_t root, std::uint32_t parent, std::uint32_t depth, std::vector<FlameNode> &out) const
    {
        struct Pending
        {
            std::uint32_t gathered, parent, depth;
        };
        std::vector<Pending> pending{{root, parent, depth}};
        std::vector<std::uint32_t> open; // placed nodes whose subtree is still being laid out
        while (!pending.empty()) {
            const Pending next = pending.back();
            pending.pop_back();
            while (!open.empty() && out[open.back()].depth >= next.depth) {
                out[open.back()].end = static_cast<std::uint32_t>(out.size());
                open.pop_back();
            }
            const auto at = static_cast<std::uint32_t>(out.size());
            FlameNode node = m_nodes[next.gathered].node;
            node.parent = next.parent;
            node.depth = next.depth;
            out.push_back(std::move(node));
            open.push_back(at);
            const std::vector<std::uint32_t> children = sortedChildren(next.gathered);
            for (auto it = children.rbegin(); it != children.rend(); ++it)
                pending.push_back({*it, at, next.depth + 1});
        }
        for (const std::uint32_t index : open)
            out[index].end = static_cast<std::uint32_t>(out.size());
    }

    std::vector<Gathered> m_nodes;
};

FlameNode frameNode(const Frame &frame, FrameKind kind)
{
    FlameNode node;
    node.label = frameLabel(frame);
    node.detail = frameLabel(frame, true);
    node.frameKind = kind;
    return node;
}

FlameNode placeholder(std::string_view label)
{
    FlameNode node;
    node.label = std::string(label);
    return node;
}

// Stack keying: each stack's node in the tree, through the memo of its callers' nodes.
void gatherByStack(const Trace &trace, const std::vector<std::size_t> &allocations, bool machinery, FlameTree &tree)
{
    const StackTable &stacks = trace.stacks;
    FrameKinds kinds(stacks);
    std::unordered_map<std::uint32_t, std::uint32_t> nodeOfStack{{StackTable::kEmptyStack, FlameTree::kRoot}};
    std::vector<std::uint32_t> walk;
    const auto nodeOf = [&](std::uint32_t stack) {
        walk.clear();
        auto known = nodeOfStack.find(stack);
        for (std::uint32_t s = stack; known == nodeOfStack.end(); known = nodeOfStack.find(s)) {
            walk.push_back(s);
            s = stacks.nodes()[s].parent;
        }
        std::uint32_t node = known->second;
        for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
            const std::uint32_t frame = stacks.nodes()[*it].frame;
            if (kinds.shown(frame, machinery)) {
                const FlameNodeType type = kinds.synthetic(frame) ? FlameNodeType::Synthetic : FlameNodeType::Frame;
                node = tree.child(node, type, frame, [&] { return frameNode(stacks.frames()[frame], kinds.of(frame)); });
            }
            nodeOfStack.emplace(*it, node);
        }
        return node;
    };
    for (const std::size_t i : allocations) {
        const std::uint32_t stack = trace.events.stack(i);
        std::uint32_t node = FlameTree::kRoot;
        if (stack == StackTable::kEmptyStack || stack >= stacks.stackCount())
            node = tree.child(FlameTree::kRoot, FlameNodeType::NoStack, 0, [] { return placeholder(kNoStackLabel); });
        else if (node = nodeOf(stack); node == FlameTree::kRoot)
            node = tree.child(FlameTree::kRoot, FlameNodeType::OnlyHidden, 0, [] { return placeholder(kOnlyHiddenLabel); });
        tree.addBlock(node, trace.events.deltaBytes(i));
    }
}

void gatherByModule(const Trace &trace, const std::vector<std::size_t> &allocations, FlameTree &tree)
{
    std::vector<std::uint32_t> nodeOfLayer(trace.layers.size(), FlameNode::kNone);
    std::vector<std::uint32_t> walk;
    const auto nodeOf = [&](std::uint32_t layer) {
        walk.clear();
        std::uint32_t l = layer;
        for (; l < trace.layers.size() && nodeOfLayer[l] == FlameNode::kNone; l = trace.layers[l].parent)
            walk.push_back(l);
        std::uint32_t node = l < trace.layers.size() ? nodeOfLayer[l] : FlameTree::kRoot;
        for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
            const Layer &info = trace.layers[*it];
            node = tree.child(node, FlameNodeType::Layer, *it, [&] {
                FlameNode made;
                made.label = std::string(info.name());
                made.detail = info.path;
                return made;
            });
            nodeOfLayer[*it] = node;
        }
        return node;
    };
    for (const std::size_t i : allocations) {
        const std::uint32_t layer = trace.events.layer(i);
        const std::uint32_t node = layer < trace.layers.size() ? nodeOf(layer)
                                                               : tree.child(FlameTree::kRoot, FlameNodeType::NoLayer, 0,
                                                                            [] { return placeholder(kNoLayerLabel); });
        tree.addBlock(node, trace.events.deltaBytes(i));
    }
}

bool containsIgnoringCase(std::string_view text, std::string_view part)
{
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return std::search(text.begin(), text.end(), part.begin(), part.end(), [&](char a, char b) { return lower(a) == lower(b); })
           != text.end();
}

// A value per stack, from its caller's value and its own innermost frame; the empty stack's is 0.
template<typename Step>
std::vector<std::int32_t> alongStacks(const StackTable &stacks, Step step)
{
    constexpr std::int32_t kUnknown = INT32_MIN;
    std::vector<std::int32_t> values(stacks.stackCount(), kUnknown);
    values[StackTable::kEmptyStack] = 0;
    std::vector<std::uint32_t> walk;
    for (std::uint32_t stack = 1; stack < stacks.stackCount(); ++stack) {
        walk.clear();
        std::uint32_t s = stack;
        for (; values[s] == kUnknown; s = stacks.nodes()[s].parent)
            walk.push_back(s);
        std::int32_t value = values[s];
        for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
            value = step(value, stacks.nodes()[*it].frame);
            values[*it] = value;
        }
    }
    return values;
}

} // namespace

std::vector<std::uint32_t> FlameGraph::children(std::uint32_t node) const
{
    std::vector<std::uint32_t> out;
    for (std::uint32_t child = node + 1; child < nodes[node].end; child = nodes[child].end)
        out.push_back(child);
    return out;
}

std::uint32_t FlameGraph::maxDepth() const
{
    std::uint32_t deepest = 0;
    for (const FlameNode &node : nodes)
        deepest = std::max(deepest, node.depth);
    return deepest;
}

FlameGraph buildFlameGraph(const Trace &trace, const std::vector<std::size_t> &allocations, const FlameGraphOptions &options)
{
    FlameTree tree;
    if (options.keying == FlameKeying::Stack)
        gatherByStack(trace, allocations, options.machinery, tree);
    else
        gatherByModule(trace, allocations, tree);
    FlameGraph graph;
    graph.options = options;
    if (!allocations.empty())
        graph.device = trace.lanes[trace.events.lane(allocations.front())].device;
    graph.nodes = tree.finish();
    return graph;
}

FlameGraph buildFlameGraph(const Trace &trace, const LiveSet &live, const FlameGraphOptions &options)
{
    FlameGraph graph = buildFlameGraph(trace, live.allocations, options);
    graph.device = live.device;
    graph.timeNs = live.timeNs;
    return graph;
}

FlameGraph buildFlameGraphAt(const Trace &trace, Device device, std::int64_t timeNs, const FlameGraphOptions &options)
{
    return buildFlameGraph(trace, liveSetAt(trace, device, timeNs), options);
}

bool FlameSelection::containsEvent(const Trace &trace, std::size_t event) const
{
    return keying == FlameKeying::Stack ? containsStack(trace.events.stack(event)) : containsLayer(trace.events.layer(event));
}

FlameSelection selectUnder(const Trace &trace, const FlameGraph &graph, std::uint32_t node)
{
    FlameSelection selection;
    selection.keying = graph.options.keying;
    const FlameNode &chosen = graph.nodes.at(node);
    if (selection.keying == FlameKeying::Module) {
        selection.layers.assign(trace.layers.size(), chosen.type == FlameNodeType::Root);
        selection.noLayer = chosen.type == FlameNodeType::Root || chosen.type == FlameNodeType::NoLayer;
        if (chosen.type == FlameNodeType::Layer) {
            for (std::uint32_t l = 0; l < trace.layers.size(); ++l)
                selection.layers[l] = trace.isWithin(l, chosen.key);
        }
        return selection;
    }

    const StackTable &stacks = trace.stacks;
    selection.stacks.assign(stacks.stackCount(), chosen.type == FlameNodeType::Root);
    if (chosen.type == FlameNodeType::Root)
        return selection;
    selection.stacks[StackTable::kEmptyStack] = chosen.type == FlameNodeType::NoStack;
    FrameKinds kinds(stacks);
    const auto shown = [&](std::uint32_t frame) { return kinds.shown(frame, graph.options.machinery); };
    if (chosen.type == FlameNodeType::OnlyHidden) {
        const std::vector<std::int32_t> anyShown =
            alongStacks(stacks, [&](std::int32_t above, std::uint32_t frame) { return above != 0 || shown(frame) ? 1 : 0; });
        for (std::uint32_t stack = 1; stack < stacks.stackCount(); ++stack)
            selection.stacks[stack] = anyShown[stack] == 0;
    } else if (chosen.type == FlameNodeType::Frame || chosen.type == FlameNodeType::Synthetic) {
        // The frames from the top down to the node; a stack is under it when its shown
        // frames start with them. How far along them a stack is follows from its caller.
        std::vector<std::uint32_t> path;
        for (std::uint32_t n = node; n != 0; n = graph.nodes[n].parent)
            path.push_back(graph.nodes[n].key);
        std::reverse(path.begin(), path.end());
        const auto complete = static_cast<std::int32_t>(path.size());
        const std::vector<std::int32_t> matched = alongStacks(stacks, [&](std::int32_t above, std::uint32_t frame) {
            if (above < 0 || above == complete || !shown(frame))
                return above;
            return frame == path[static_cast<std::size_t>(above)] ? above + 1 : -1;
        });
        for (std::uint32_t stack = 1; stack < stacks.stackCount(); ++stack)
            selection.stacks[stack] = matched[stack] == complete;
    }
    return selection;
}

FlameSearch searchFlameGraph(const FlameGraph &graph, std::string_view text)
{
    FlameSearch found;
    if (text.empty())
        return found;
    std::uint32_t coveredUntil = 0; // nodes before it lie under a match already counted
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        const FlameNode &node = graph.nodes[i];
        if (!containsIgnoringCase(node.label, text) && !containsIgnoringCase(node.detail, text))
            continue;
        found.nodes.push_back(i);
        if (i >= coveredUntil) {
            found.bytes += node.bytes;
            found.blocks += node.blocks;
            coveredUntil = node.end;
        }
    }
    return found;
}

} // namespace peaklens
