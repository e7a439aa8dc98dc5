// SPDX-License-Identifier: Apache-2.0
#include "snapshotstacks.h"

#include "core/error.h"
#include "core/trace/frameclassifier.h"
#include "core/trace/loadbudget.h"
#include "streamsink.h"

#include <algorithm>

#include <functional>

namespace peaklens::pickle {

namespace {
// Charged to the load in steps, as the trace's StackTable charges its own: a node or frame
// and its entry in the index.
constexpr std::size_t kEntryBytes = 48;
constexpr std::size_t kChargeStep = 65536;
// Ids are stored doubled (see known()).
constexpr std::size_t kMaxEntries = std::size_t(1) << 31;
} // namespace

SnapshotStacks::SnapshotStacks(StackTable &table, const std::string &path)
    : m_table(table)
    , m_path(path)
{
    m_nodes.push_back({});
    m_internedNodes.push_back(StackTable::kEmptyStack);
}

std::size_t SnapshotStacks::LocalFrameHash::operator()(const LocalFrame &frame) const
{
    std::size_t h = std::hash<std::string_view>()(frame.function);
    h = h * 31 + std::hash<std::string_view>()(frame.file);
    return h * 31 + static_cast<std::size_t>(frame.line);
}

void SnapshotStacks::failReleased() const
{
    throw OnePassError(m_path, "a list of frames refers back to part of the pickle read and released before");
}

std::uint32_t SnapshotStacks::read(const Document &document, const Value *frames)
{
    if (!frames)
        return kNoFrames;
    switch (frames->kind) {
    case Kind::Frames: // a list read before
        if (frames->container >= m_nodes.size())
            failReleased();
        return frames->container;
    case Kind::Released:
        failReleased();
    case Kind::Frame: // a dict read before: not a list of frames, as it was not then
        return kNoFrames;
    default:
        break;
    }
    if (!frames->isSequence())
        return kNoFrames;
    if (const std::uint32_t code = known(frames->container); code != kUnknown && code % 2 == 0)
        return code / 2;
    // Innermost first in the list; the table grows from the outermost.
    const std::span<const Value> list = document.items(*frames);
    m_listFrames.clear();
    for (const Value &frame : list)
        m_listFrames.push_back(readFrame(document, frame));
    spliceTrailingPythonFrames(m_listFrames);
    std::uint32_t stack = kNoFrames;
    for (auto it = m_listFrames.rbegin(); it != m_listFrames.rend(); ++it)
        stack = localStack(stack, *it);
    remember(frames->container, stack * 2);
    return stack;
}

std::uint32_t SnapshotStacks::readFrame(const Document &document, const Value &frame)
{
    switch (frame.kind) {
    case Kind::Frame: // a frame dict read before
        if (frame.container >= m_frames.size())
            failReleased();
        return frame.container;
    case Kind::Released:
        failReleased();
    default: // a list read before is no frame, as it was not then
        break;
    }
    if (!frame.isDict())
        return localFrame(LocalFrame{"?", "", 0});
    if (const std::uint32_t code = known(frame.container); code != kUnknown && code % 2 == 1)
        return code / 2;
    const std::uint32_t id = localFrame(LocalFrame{document.findString(frame, "name"), document.findString(frame, "filename"),
                                                   static_cast<std::int32_t>(document.findInteger(frame, "line"))});
    remember(frame.container, id * 2 + 1);
    return id;
}

// PyTorch matches the Python frames it captured to the interpreter's frames among the C++
// ones, and appends those it could not match (the outermost: the script's <module>) after
// _start. They belong just outside the outermost Python frame it did place.
void SnapshotStacks::spliceTrailingPythonFrames(std::vector<std::uint32_t> &frames) const
{
    const auto lastNative = std::find_if(frames.rbegin(), frames.rend(), [&](std::uint32_t f) { return !m_python[f]; });
    if (lastNative == frames.rbegin() || lastNative == frames.rend())
        return;                          // no trailing Python frames, or no native ones
    const auto tail = lastNative.base(); // the first trailing Python frame
    const auto placed = std::find_if(std::next(lastNative), frames.rend(), [&](std::uint32_t f) { return m_python[f]; });
    if (placed == frames.rend())
        return; // nothing placed to put them beside
    std::rotate(placed.base(), tail, frames.end());
}

void SnapshotStacks::admit(std::size_t count, const char *what) const
{
    if (count >= kMaxEntries)
        throw ImportError(m_path, "has more distinct " + std::string(what) + " than PeakLens can hold.");
    if (count % kChargeStep == 0)
        LoadBudget::charge(kChargeStep * kEntryBytes, what);
}

std::uint32_t SnapshotStacks::localFrame(const LocalFrame &frame)
{
    auto [it, inserted] = m_frameIds.try_emplace(frame, static_cast<std::uint32_t>(m_frames.size()));
    if (inserted) {
        admit(m_frames.size(), "stack frames");
        m_frames.push_back(frame);
        m_python.push_back(isPythonFrame(Frame{std::string(), std::string(frame.file), 0}));
        m_internedFrames.push_back(kUnknown);
    }
    return it->second;
}

std::uint32_t SnapshotStacks::localStack(std::uint32_t parent, std::uint32_t frame)
{
    const std::uint64_t key = static_cast<std::uint64_t>(parent) << 32 | frame;
    const auto [held, inserted] = m_nodeIds.tryEmplace(key, static_cast<std::uint32_t>(m_nodes.size()));
    const std::uint32_t node = *held;
    if (inserted) {
        admit(m_nodes.size(), "call stacks");
        m_nodes.push_back({parent, frame});
        m_internedNodes.push_back(kUnknown);
    }
    return node;
}

std::uint32_t SnapshotStacks::withContext(std::uint32_t stack, std::string_view file, std::string_view value)
{
    if (value.empty() || value == "N/A")
        return stack;
    auto text = m_contexts.find(value);
    if (text == m_contexts.end())
        text = m_contexts.emplace(value).first;
    return localStack(stack, localFrame(LocalFrame{*text, file, 0}));
}

std::uint32_t SnapshotStacks::internFrame(std::uint32_t frame)
{
    std::uint32_t &interned = m_internedFrames[frame];
    if (interned == kUnknown) {
        const LocalFrame &local = m_frames[frame];
        interned = m_table.internFrame(Frame{std::string(local.function), std::string(local.file), local.line});
    }
    return interned;
}

std::uint32_t SnapshotStacks::intern(std::uint32_t stack)
{
    if (m_internedNodes[stack] != kUnknown)
        return m_internedNodes[stack];
    // The frames not in the trace's table yet, innermost first; interned from the outermost,
    // as reading the list itself would.
    m_chain.clear();
    std::uint32_t node = stack;
    for (; m_internedNodes[node] == kUnknown; node = m_nodes[node].parent)
        m_chain.push_back(node);
    std::uint32_t interned = m_internedNodes[node];
    for (auto it = m_chain.rbegin(); it != m_chain.rend(); ++it) {
        interned = m_table.internStack(interned, internFrame(m_nodes[*it].frame));
        m_internedNodes[*it] = interned;
    }
    return interned;
}

bool SnapshotStacks::isFreeStack(std::uint32_t stack) const
{
    for (std::uint32_t node = stack; node != kNoFrames; node = m_nodes[node].parent) {
        const std::string_view name = m_frames[m_nodes[node].frame].function;
        if (name.find("CachingAllocator") == std::string_view::npos)
            continue;
        return name.find("::malloc(") == std::string_view::npos && name.find("::allocate(") == std::string_view::npos;
    }
    return false;
}

Value SnapshotStacks::standIn(const Value &container) const
{
    const std::uint32_t code = known(container.container);
    if (code == kUnknown)
        return Value::standIn(Kind::Released);
    return Value::standIn(code % 2 ? Kind::Frame : Kind::Frames, code / 2);
}

void SnapshotStacks::remember(std::uint32_t container, std::uint32_t code)
{
    if (container >= m_byContainer.size())
        m_byContainer.resize(std::size_t(container) + 1, kUnknown);
    m_byContainer[container] = code;
}

void SnapshotStacks::forgetFrom(std::size_t first)
{
    if (first < m_byContainer.size())
        m_byContainer.resize(first);
}

} // namespace peaklens::pickle
