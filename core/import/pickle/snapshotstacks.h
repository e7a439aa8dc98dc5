// SPDX-License-Identifier: Apache-2.0
#pragma once
// The call stacks of a PyTorch memory snapshot as it is read: each "frames" list and frame
// dict is read once into a table of this reader's own, and a stack enters the trace's
// StackTable only when an event uses it, in the order a reading of the whole document
// would have interned it, so streamed and whole-document imports give the same table.

#include "core/trace/addressmap.h"
#include "core/trace/stacktable.h"
#include "value.h"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace peaklens::pickle {

class SnapshotStacks
{
public:
    // Node 0 of the reader's table, as of the trace's: no frames.
    static constexpr std::uint32_t kNoFrames = 0;

    SnapshotStacks(StackTable &table, const std::string &path);

    // The call stack a "frames" value lists (innermost frame first) in the reader's table;
    // kNoFrames when it is missing or not a list. Lists and frame dicts are read once each,
    // known again by their container or stand-in. Throws ImportError for a released one.
    std::uint32_t read(const Document &document, const Value *frames);
    // The stack with the frame Frame{value, file, 0} inside its innermost (stacktable.h's
    // kCompileContextFile, kUserMetadataFile); the stack itself for an empty value or "N/A".
    std::uint32_t withContext(std::uint32_t stack, std::string_view file, std::string_view value);
    // That stack in the trace's table, interned on first use.
    std::uint32_t intern(std::uint32_t stack);
    // True when the stack was recorded by the allocator's free (context="all"), not by its
    // malloc: the innermost allocator frame says which way the allocator was going.
    bool isFreeStack(std::uint32_t stack) const;

    // What the memo keeps for a container that is released once read.
    Value standIn(const Value &container) const;
    // Containers from `first` on are gone; their ids will name others.
    void forgetFrom(std::size_t first);

private:
    struct LocalFrame
    {
        std::string_view function; // into the document's bytes or strings
        std::string_view file;
        std::int32_t line = 0;
        bool operator==(const LocalFrame &) const = default;
    };
    struct LocalFrameHash
    {
        std::size_t operator()(const LocalFrame &frame) const;
    };
    static constexpr std::uint32_t kUnknown = UINT32_MAX;

    std::uint32_t readFrame(const Document &document, const Value &frame);
    void spliceTrailingPythonFrames(std::vector<std::uint32_t> &frames) const;
    // Before the count-th frame or node: refused past what ids can name, charged in steps.
    void admit(std::size_t count, const char *what) const;
    std::uint32_t localFrame(const LocalFrame &frame);
    std::uint32_t localStack(std::uint32_t parent, std::uint32_t frame);
    std::uint32_t internFrame(std::uint32_t frame);
    // What was read of a container: index * 2 + 1 for a frame dict, index * 2 for a list.
    std::uint32_t known(std::uint32_t container) const
    {
        return container < m_byContainer.size() ? m_byContainer[container] : kUnknown;
    }
    void remember(std::uint32_t container, std::uint32_t code);
    [[noreturn]] void failReleased() const;

    StackTable &m_table;
    const std::string &m_path;
    std::vector<LocalFrame> m_frames;
    std::vector<std::uint8_t> m_python; // per frame: a Python frame
    std::unordered_map<LocalFrame, std::uint32_t, LocalFrameHash> m_frameIds;
    std::vector<StackNode> m_nodes;                // node 0: no frames
    AddressMap<std::uint32_t> m_nodeIds;           // (parent << 32 | frame) -> node
    std::vector<std::uint32_t> m_internedNodes;    // per node: its stack in the trace, or kUnknown
    std::vector<std::uint32_t> m_internedFrames;   // per frame: its frame in the trace, or kUnknown
    std::vector<std::uint32_t> m_byContainer;      // per container id: what it was read as
    std::vector<std::uint32_t> m_chain;            // scratch for intern()
    std::set<std::string, std::less<>> m_contexts; // the values withContext was given, owned
    std::vector<std::uint32_t> m_listFrames;       // scratch for read()
};

} // namespace peaklens::pickle
