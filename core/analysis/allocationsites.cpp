// SPDX-License-Identifier: Apache-2.0
#include "allocationsites.h"

#include <map>
#include <tuple>

namespace peaklens {

namespace {

constexpr std::uint32_t kNone = AllocationSite::kNoFrame;

// Per stack node, the frames that could name its site.
struct Candidates
{
    std::uint32_t user = kNone, userNode = 0; // innermost frame of user code, and its stack node
    std::uint32_t library = kNone;            // innermost Python frame of a library
    std::uint32_t torch = kNone;              // innermost Python frame of PyTorch
    std::uint32_t outerOperator = kNone;      // outermost operator: what the caller asked for
    std::uint32_t autogradNode = kNone;       // innermost autograd node
    std::uint32_t other = kNone;              // innermost frame that is not shared machinery
    std::uint32_t outermost = kNone;          // the stack's first frame: nearest its caller
};

bool isMachinery(FrameKind kind)
{
    return kind == FrameKind::Allocator || kind == FrameKind::Dispatcher || kind == FrameKind::Interpreter
           || kind == FrameKind::System;
}

} // namespace

std::string_view siteKindName(SiteKind kind)
{
    static constexpr std::string_view names[] = {"none", "user", "library", "torch", "operator", "other"};
    return names[static_cast<std::size_t>(kind)];
}

std::string frameLabel(const Frame &frame, bool fullPath)
{
    const std::string_view file = fullPath ? std::string_view(frame.file) : fileBaseName(frame.file);
    if (file.empty() || file == "??")
        return frame.function;
    std::string where(file);
    if (frame.line > 0)
        where += ":" + std::to_string(frame.line);
    return frame.function + " (" + where + ")";
}

AllocationSites::AllocationSites(const StackTable &stacks)
    : m_stacks(stacks)
{
    const std::vector<Frame> &frames = stacks.frames();
    m_frameKinds.reserve(frames.size());
    std::vector<bool> python;
    python.reserve(frames.size());
    std::vector<bool> isOperator(frames.size()), isNode(frames.size()), passThrough(frames.size());
    for (std::size_t f = 0; f < frames.size(); ++f) {
        m_frameKinds.push_back(classifyFrame(frames[f]));
        python.push_back(isPythonFrame(frames[f]));
        passThrough[f] = m_frameKinds.back() == FrameKind::Library && isPassThroughFrame(frames[f]);
        isOperator[f] = operatorName(frames[f]).has_value();
        isNode[f] = autogradNodeName(frames[f]).has_value();
    }

    const std::vector<StackNode> &nodes = stacks.nodes();
    std::vector<Candidates> candidates(nodes.size());
    m_sites.push_back({}); // kNoSite: the empty stack
    m_siteOfStack.assign(nodes.size(), kNoSite);
    m_siteFrameOfStack.assign(nodes.size(), 0);
    std::map<std::tuple<SiteKind, std::uint32_t, std::uint32_t>, std::uint32_t> ids;
    // A parent always comes before its children, and a node's own frame is its innermost.
    for (std::size_t n = 1; n < nodes.size(); ++n) {
        const std::uint32_t f = nodes[n].frame;
        Candidates c = nodes[n].parent < n ? candidates[nodes[n].parent] : Candidates{};
        const FrameKind kind = m_frameKinds[f];
        if (python[f] && kind == FrameKind::User) {
            c.user = f;
            c.userNode = static_cast<std::uint32_t>(n);
        } else if (python[f] && kind == FrameKind::Library && !passThrough[f]) {
            c.library = f; // a library's hook or decorator names nothing
        } else if (python[f] && kind == FrameKind::Torch) {
            c.torch = f;
        }
        if (c.outerOperator == kNone && isOperator[f])
            c.outerOperator = f;
        if (isNode[f])
            c.autogradNode = f;
        if (!isMachinery(kind))
            c.other = f;
        if (c.outermost == kNone)
            c.outermost = f;
        candidates[n] = c;

        AllocationSite site;
        if (c.user != kNone) {
            site = {SiteKind::User, c.user, kNone};
            m_siteFrameOfStack[n] = c.userNode;
        } else if (c.library != kNone) {
            site = {SiteKind::Library, c.library, kNone};
        } else if (c.torch != kNone) {
            site = {SiteKind::Torch, c.torch, kNone};
        } else if (c.outerOperator != kNone || c.autogradNode != kNone) {
            site = {SiteKind::Operator, c.outerOperator != kNone ? c.outerOperator : c.autogradNode,
                    c.outerOperator != kNone ? c.autogradNode : kNone};
        } else {
            site = {SiteKind::Other, c.other != kNone ? c.other : c.outermost, kNone};
        }
        auto [it, inserted] = ids.try_emplace({site.kind, site.frame, site.node}, static_cast<std::uint32_t>(m_sites.size()));
        if (inserted)
            m_sites.push_back(site);
        m_siteOfStack[n] = it->second;
    }
}

std::uint32_t AllocationSites::siteOf(std::uint32_t stack) const
{
    return stack < m_siteOfStack.size() ? m_siteOfStack[stack] : kNoSite;
}

std::string AllocationSites::label(std::uint32_t id) const
{
    const AllocationSite &s = site(id);
    const std::vector<Frame> &frames = m_stacks.frames();
    switch (s.kind) {
    case SiteKind::None:
        return "(no stack)";
    case SiteKind::Operator: {
        const Frame &frame = frames[s.frame];
        std::string text = operatorName(frame).value_or(autogradNodeName(frame).value_or(frame.function));
        if (s.node != kNone)
            text += " in " + autogradNodeName(frames[s.node]).value_or(frames[s.node].function);
        return text;
    }
    default:
        return frameLabel(frames[s.frame]);
    }
}

std::string AllocationSites::location(std::uint32_t id) const
{
    const AllocationSite &s = site(id);
    return s.kind == SiteKind::None || s.kind == SiteKind::Operator ? label(id) : frameLabel(m_stacks.frames()[s.frame], true);
}

std::vector<std::string> AllocationSites::callers(std::uint32_t stack, std::size_t most) const
{
    std::vector<std::string> out;
    if (stack >= m_siteOfStack.size() || site(m_siteOfStack[stack]).kind != SiteKind::User)
        return out;
    const std::vector<StackNode> &nodes = m_stacks.nodes();
    for (std::uint32_t n = nodes[m_siteFrameOfStack[stack]].parent; n != StackTable::kEmptyStack && out.size() < most;
         n = nodes[n].parent) {
        if (m_frameKinds[nodes[n].frame] == FrameKind::User)
            out.push_back(frameLabel(m_stacks.frames()[nodes[n].frame]));
        if (nodes[n].parent >= n)
            break;
    }
    return out;
}

} // namespace peaklens

namespace peaklens {

std::vector<StackLine> describeStack(const StackTable &stacks, const AllocationSites &sites, std::uint32_t stack, bool machinery)
{
    std::vector<StackLine> lines;
    for (std::uint32_t frame : stacks.framesOf(stack)) {
        const FrameKind kind = sites.kindOfFrame(frame);
        if (machinery || !isMachinery(kind))
            lines.push_back({kind, frameLabel(stacks.frames()[frame], true)});
    }
    return lines;
}

} // namespace peaklens
