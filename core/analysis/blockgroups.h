// SPDX-License-Identifier: Apache-2.0
#pragma once
// Blocks live at a moment grouped by what their call stacks say, beyond the layer, category
// and allocation site every summary shows: by the source file of their allocation site, or
// by the frame a user's regular expression matches. Groups are named, not numbered, so the
// same group of two traces (a diff) matches by its name.

#include "core/analysis/allocationsites.h"
#include "core/analysis/peakfinder.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

struct StackGrouping
{
    enum class Kind : std::uint8_t {
        File,  // the allocation site's source file, as the trace recorded its path
        Regex, // the innermost frame "function (path:line)" that `pattern` matches: its first
               // capture group where the pattern has one, else the match
    };
    Kind kind = Kind::File;
    std::string pattern; // Regex: ECMAScript syntax

    // "file", "regex:PATTERN": as --group writes it.
    std::string text() const;
    // "source file", "frames matching PATTERN": for a table's title.
    std::string title() const;
};

// --group's text; throws peaklens::Error saying what it accepts, or what is wrong with the pattern.
StackGrouping parseStackGrouping(std::string_view text);

// std::regex compiles and matches recursively, a stack frame per term and per character
// matched: a pattern is bounded as the layer pattern is (chainselection.h), and a frame is
// matched on its first 1,024 bytes, far more than a function and its path take.
inline constexpr std::size_t kMaxGroupPatternLength = 512;
inline constexpr std::size_t kMaxMatchedFrameBytes = 1024;

inline constexpr std::string_view kNoSourceFile = "(no source file)";
inline constexpr std::string_view kNoFrameMatches = "(no frame matches)";

struct GroupRow
{
    std::string key;
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
    bool operator==(const GroupRow &) const = default;
};

// The groups of blocks given per call stack (a live set's byStack), largest first, then by name.
std::vector<GroupRow> groupStacks(const AllocationSites &sites, const std::vector<LiveGroup> &byStack,
                                  const StackGrouping &grouping);

} // namespace peaklens
