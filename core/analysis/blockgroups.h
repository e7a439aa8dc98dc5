// SPDX-License-Identifier: Apache-2.0
#pragma once
// Blocks live at a moment grouped beyond the layer, category and allocation site every
// summary shows: by what their call stacks say (the allocation site's source file, the
// frame a user's regular expression matches, the torch.compile graph or the user metadata
// a snapshot recorded), by the stage they were allocated in, or by the memory pool or
// stream they live in. Groups are named, not numbered, so the same group of two traces (a
// diff) matches by its name.

#include "core/analysis/allocationsites.h"
#include "core/analysis/peakfinder.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

struct BlockGrouping
{
    enum class Kind : std::uint8_t {
        File,           // the allocation site's source file, as the trace recorded its path
        Regex,          // the innermost frame "function (path:line)" that `pattern` matches: its first
                        // capture group where the pattern has one, else the match
        CompileContext, // the compile_context of the allocating snapshot entry
        UserMetadata,   // the user_metadata of the allocating snapshot entry
        Stage,          // the innermost stage (range.h) open when the block was allocated
        Pool,           // the memory pool of the block's lane
        Stream,         // the stream of the block's lane
    };
    Kind kind = Kind::File;
    std::string pattern; // Regex: ECMAScript syntax

    // "file", "regex:PATTERN", "compile-context", "user-metadata", "stage", "pool",
    // "stream": as --group writes it.
    std::string text() const;
    // "source file", "frames matching PATTERN", "compile context", ...: for a table's title.
    std::string title() const;
};

// --group's text; throws peaklens::Error saying what it accepts, or what is wrong with the pattern.
BlockGrouping parseBlockGrouping(std::string_view text);
// The texts parseBlockGrouping takes, for help: "file, regex:PATTERN, ...".
std::string blockGroupingChoices();

// std::regex compiles and matches recursively, a stack frame per term and per character
// matched: a pattern is bounded as the layer pattern is (chainselection.h), and a frame is
// matched on its first 1,024 bytes, far more than a function and its path take.
inline constexpr std::size_t kMaxGroupPatternLength = 512;
inline constexpr std::size_t kMaxMatchedFrameBytes = 1024;

inline constexpr std::string_view kNoSourceFile = "(no source file)";
inline constexpr std::string_view kNoFrameMatches = "(no frame matches)";
inline constexpr std::string_view kNoCompileContext = "(no compile context)";
inline constexpr std::string_view kNoUserMetadata = "(no user metadata)";
inline constexpr std::string_view kNoStageName = "(no stage)";

struct GroupRow
{
    std::string key;
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
    bool operator==(const GroupRow &) const = default;
};

// The groups of a live set of `trace` (whose stacks `sites` names), largest first, then by name.
std::vector<GroupRow> groupBlocks(const Trace &trace, const AllocationSites &sites, const LiveSet &live,
                                  const BlockGrouping &grouping);

// The value a stack's context frame holds (kCompileContextFile or kUserMetadataFile), if any.
std::optional<std::string> stackContext(const StackTable &stacks, std::uint32_t stack, std::string_view file);

// Stages in the order they begin, and the innermost one open at a time, for times asked
// in order.
class StageCursor
{
public:
    explicit StageCursor(const Trace &trace);
    // The stage name index open at timeNs (kNoStage for none); times must not decrease.
    std::uint32_t stageAt(std::int64_t timeNs);

private:
    std::vector<const Range *> m_stages; // by begin
    std::size_t m_next = 0;
    std::vector<const Range *> m_open; // innermost last
};

} // namespace peaklens
