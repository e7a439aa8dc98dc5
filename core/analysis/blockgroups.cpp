// SPDX-License-Identifier: Apache-2.0
#include "blockgroups.h"

#include "core/analysis/timelineseries.h"
#include "core/error.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <regex>

namespace peaklens {

namespace {

constexpr std::string_view kRegexPrefix = "regex:";

struct KindName
{
    BlockGrouping::Kind kind;
    std::string_view text;
    std::string_view title;
};
constexpr std::array<KindName, 6> kKindNames = {{
    {BlockGrouping::Kind::File, "file", "source file"},
    {BlockGrouping::Kind::CompileContext, "compile-context", "compile context"},
    {BlockGrouping::Kind::UserMetadata, "user-metadata", "user metadata"},
    {BlockGrouping::Kind::Stage, "stage", "stage"},
    {BlockGrouping::Kind::Pool, "pool", "memory pool"},
    {BlockGrouping::Kind::Stream, "stream", "stream"},
}};

const KindName *nameOf(BlockGrouping::Kind kind)
{
    for (const KindName &name : kKindNames) {
        if (name.kind == kind)
            return &name;
    }
    return nullptr;
}

} // namespace

std::string BlockGrouping::text() const
{
    const KindName *name = nameOf(kind);
    return name ? std::string(name->text) : std::string(kRegexPrefix) + pattern;
}

std::string BlockGrouping::title() const
{
    const KindName *name = nameOf(kind);
    return name ? std::string(name->title) : "frames matching " + pattern;
}

std::string blockGroupingChoices()
{
    return "file, regex:PATTERN, compile-context, user-metadata, stage, pool or stream";
}

BlockGrouping parseBlockGrouping(std::string_view text)
{
    for (const KindName &name : kKindNames) {
        if (text == name.text)
            return BlockGrouping{name.kind, {}};
    }
    if (text.starts_with(kRegexPrefix)) {
        BlockGrouping grouping{BlockGrouping::Kind::Regex, std::string(text.substr(kRegexPrefix.size()))};
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
    throw Error("--group " + std::string(text) + ": give " + blockGroupingChoices());
}

std::optional<std::string> stackContext(const StackTable &stacks, std::uint32_t stack, std::string_view file)
{
    // Context frames are the innermost ones (snapshotstacks.h): at most two to look at.
    for (std::uint32_t node = stack, depth = 0; node != StackTable::kEmptyStack && depth < 2;
         node = stacks.nodes()[node].parent, ++depth) {
        const Frame &frame = stacks.frames()[stacks.nodes()[node].frame];
        if (frame.file == file)
            return frame.function;
    }
    return std::nullopt;
}

StageCursor::StageCursor(const Trace &trace)
{
    for (const Range &range : trace.ranges) {
        if (range.stage != kNoStage)
            m_stages.push_back(&range); // ranges are sorted by begin
    }
}

std::uint32_t StageCursor::stageAt(std::int64_t timeNs)
{
    while (m_next < m_stages.size() && m_stages[m_next]->beginNs <= timeNs)
        m_open.push_back(m_stages[m_next++]);
    std::erase_if(m_open, [&](const Range *range) { return range->endNs <= timeNs; });
    return m_open.empty() ? kNoStage : m_open.back()->stage;
}

std::vector<GroupRow> groupBlocks(const Trace &trace, const AllocationSites &sites, const LiveSet &live,
                                  const BlockGrouping &grouping)
{
    std::map<std::string, GroupRow, std::less<>> groups;
    const auto add = [&](std::string key, std::int64_t bytes, std::int64_t blocks) {
        GroupRow &row = groups[key];
        row.key = std::move(key);
        row.bytes += bytes;
        row.blocks += blocks;
    };
    using Kind = BlockGrouping::Kind;
    const StackTable &stacks = sites.stacks();
    switch (grouping.kind) {
    case Kind::File:
        for (const LiveGroup &group : live.byStack) {
            const AllocationSite &site = sites.site(sites.siteOf(group.key));
            const bool python = site.kind == SiteKind::User || site.kind == SiteKind::Library || site.kind == SiteKind::Torch;
            const bool named = python && !stacks.frames()[site.frame].file.empty();
            add(named ? stacks.frames()[site.frame].file : std::string(kNoSourceFile), group.bytes, group.blocks);
        }
        break;
    case Kind::Regex: {
        const std::regex pattern(grouping.pattern);
        for (const LiveGroup &group : live.byStack) {
            std::string key(kNoFrameMatches);
            for (const std::uint32_t frame : stacks.framesOf(group.key)) {
                std::string text = frameLabel(stacks.frames()[frame], true);
                text.resize(std::min(text.size(), kMaxMatchedFrameBytes));
                std::smatch match;
                if (std::regex_search(text, match, pattern)) {
                    key = match.size() > 1 && match[1].matched ? match[1].str() : match[0].str();
                    break;
                }
            }
            add(std::move(key), group.bytes, group.blocks);
        }
        break;
    }
    case Kind::CompileContext:
    case Kind::UserMetadata: {
        const bool compile = grouping.kind == Kind::CompileContext;
        for (const LiveGroup &group : live.byStack) {
            const auto value = stackContext(stacks, group.key, compile ? kCompileContextFile : kUserMetadataFile);
            add(value.value_or(std::string(compile ? kNoCompileContext : kNoUserMetadata)), group.bytes, group.blocks);
        }
        break;
    }
    case Kind::Stage: {
        StageCursor stages(trace);
        for (const std::size_t event : live.allocations) { // in time order
            const std::uint32_t stage = stages.stageAt(trace.events.timeNs(event));
            add(stage == kNoStage ? std::string(kNoStageName) : trace.stageNames[stage], trace.events.deltaBytes(event), 1);
        }
        break;
    }
    case Kind::Pool:
    case Kind::Stream:
        for (const std::size_t event : live.allocations) {
            const Lane &lane = trace.lanes[trace.events.lane(event)];
            add(grouping.kind == Kind::Pool ? poolLabel(lane.pool) : streamLabel(lane.stream), trace.events.deltaBytes(event), 1);
        }
        break;
    }
    std::vector<GroupRow> rows;
    rows.reserve(groups.size());
    for (auto &[key, row] : groups)
        rows.push_back(std::move(row));
    std::stable_sort(rows.begin(), rows.end(), [](const GroupRow &a, const GroupRow &b) { return a.bytes > b.bytes; });
    return rows;
}

} // namespace peaklens
