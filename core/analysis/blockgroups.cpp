// SPDX-License-Identifier: Apache-2.0
#include "blockgroups.h"

#include "core/error.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>

namespace peaklens {

namespace {

constexpr std::string_view kRegexPrefix = "regex:";

} // namespace

std::string StackGrouping::text() const
{
    return kind == Kind::File ? std::string("file") : std::string(kRegexPrefix) + pattern;
}

std::string StackGrouping::title() const
{
    return kind == Kind::File ? std::string("source file") : "frames matching " + pattern;
}

StackGrouping parseStackGrouping(std::string_view text)
{
    if (text == "file")
        return StackGrouping{StackGrouping::Kind::File, {}};
    if (text.starts_with(kRegexPrefix)) {
        StackGrouping grouping{StackGrouping::Kind::Regex, std::string(text.substr(kRegexPrefix.size()))};
        if (grouping.pattern.empty())
            throw Error("--group regex: needs a pattern after the colon, e.g. regex:model\\.py");
        if (grouping.pattern.size() > kMaxGroupPatternLength)
            throw Error("--group regex: the pattern is " + std::to_string(grouping.pattern.size())
                        + " characters long; PeakLens takes at most " + std::to_string(kMaxGroupPatternLength) + ".");
        try {
            (void)std::regex(grouping.pattern);
        } catch (const std::regex_error &error) {
            throw Error("--group " + std::string(text) + ": not a regular expression (" + error.what() + ")");
        }
        return grouping;
    }
    throw Error("--group " + std::string(text) + ": give file, or regex:PATTERN");
}

std::vector<GroupRow> groupStacks(const AllocationSites &sites, const std::vector<LiveGroup> &byStack,
                                  const StackGrouping &grouping)
{
    const StackTable &stacks = sites.stacks();
    std::optional<std::regex> pattern;
    if (grouping.kind == StackGrouping::Kind::Regex)
        pattern.emplace(grouping.pattern);
    const auto keyOf = [&](std::uint32_t stack) -> std::string {
        if (grouping.kind == StackGrouping::Kind::File) {
            const AllocationSite &site = sites.site(sites.siteOf(stack));
            const bool python = site.kind == SiteKind::User || site.kind == SiteKind::Library || site.kind == SiteKind::Torch;
            if (!python || stacks.frames()[site.frame].file.empty())
                return std::string(kNoSourceFile);
            return stacks.frames()[site.frame].file;
        }
        for (const std::uint32_t frame : stacks.framesOf(stack)) {
            std::string text = frameLabel(stacks.frames()[frame], true);
            text.resize(std::min(text.size(), kMaxMatchedFrameBytes));
            std::smatch match;
            if (std::regex_search(text, match, *pattern))
                return match.size() > 1 && match[1].matched ? match[1].str() : match[0].str();
        }
        return std::string(kNoFrameMatches);
    };
    std::map<std::string, GroupRow, std::less<>> groups;
    for (const LiveGroup &group : byStack) {
        std::string key = keyOf(group.key);
        GroupRow &row = groups[key];
        row.key = std::move(key);
        row.bytes += group.bytes;
        row.blocks += group.blocks;
    }
    std::vector<GroupRow> rows;
    rows.reserve(groups.size());
    for (auto &[key, row] : groups)
        rows.push_back(std::move(row));
    std::stable_sort(rows.begin(), rows.end(), [](const GroupRow &a, const GroupRow &b) { return a.bytes > b.bytes; });
    return rows;
}

} // namespace peaklens
