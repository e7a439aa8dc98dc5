// SPDX-License-Identifier: Apache-2.0
// Parser of PeakLens trace text (see tracetext.h and docs/formats.md).

#include "tracetext.h"

#include "core/error.h"
#include "metadata.h"
#include "tracebuilder.h"
#include "units.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace peaklens {

namespace {

std::vector<std::string_view> splitWords(std::string_view line)
{
    std::vector<std::string_view> words;
    std::size_t pos = 0;
    while (pos < line.size()) {
        while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t'))
            ++pos;
        const std::size_t start = pos;
        while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t')
            ++pos;
        if (pos > start)
            words.push_back(line.substr(start, pos - start));
    }
    return words;
}

// Only the escapes the printer writes (docs/formats.md): any other %XX stays as it is, so a
// name cannot smuggle in a control byte or half a UTF-8 sequence.
std::string percentDecoded(std::string_view text)
{
    static constexpr std::pair<std::string_view, char> kEscapes[] = {
        {"20", ' '}, {"25", '%'}, {"3B", ';'}, {"23", '#'}, {"09", '\t'}, {"0A", '\n'}, {"3D", '='},
    };
    std::string result;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto *escape = text[i] == '%' && i + 2 < text.size()
                                 ? std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                                [&](const auto &e) {
                                                    return std::toupper(static_cast<unsigned char>(text[i + 1])) == e.first[0]
                                                           && std::toupper(static_cast<unsigned char>(text[i + 2])) == e.first[1];
                                                })
                                 : std::end(kEscapes);
        if (escape != std::end(kEscapes)) {
            result.push_back(escape->second);
            i += 2;
        } else {
            result.push_back(text[i]);
        }
    }
    return result;
}

struct Scope
{
    Phase phase = Phase::Other;
    std::uint32_t layer = kNoLayer;
};

struct OpenRange
{
    std::string scopeText;
    std::string stage;
    std::uint32_t thread = 0;
    std::size_t rangeIndex = 0;
    int line = 0;
};

struct LiveBlock
{
    std::int64_t bytes = 0;
    Category category = Category::Unknown;
    std::uint32_t lane = 0;
};

class TraceTextParser
{
public:
    std::shared_ptr<const Trace> parse(std::string_view text);

private:
    void parseLine(std::string_view line);
    void parseStatement(std::vector<std::string_view> words);
    std::int64_t takeTime(std::vector<std::string_view> &words);
    // Removes "key=value" words and "@scope" words from the list into m_options.
    void takeOptions(std::vector<std::string_view> &words);
    std::optional<std::string_view> option(std::string_view key) const;
    // The stage=NAME option of a begin or an end, decoded and taken; empty without one.
    std::string takeStage();
    std::uint32_t optionLane();
    Scope parseScope(std::string_view text);
    Scope eventScope();
    std::uint64_t blockAddress(std::string_view name, bool create);
    std::int64_t sizeArgument(std::string_view text) const;
    std::uint32_t stackOption();

    void declareLayer(const std::vector<std::string_view> &words);
    void begin(const std::vector<std::string_view> &words, std::int64_t timeNs);
    void end(const std::vector<std::string_view> &words, std::int64_t timeNs);
    void alloc(const std::vector<std::string_view> &words, std::int64_t timeNs);
    void free(const std::vector<std::string_view> &words, std::int64_t timeNs);
    void reserve(const std::vector<std::string_view> &words, std::int64_t timeNs, bool release);
    void kernel(const std::vector<std::string_view> &words, std::int64_t timeNs);
    void marker(const std::vector<std::string_view> &words, std::int64_t timeNs, MarkerKind kind);

    [[noreturn]] void fail(const std::string &problem) const { throw TraceTextError(m_line, problem); }
    void expectWords(const std::vector<std::string_view> &words, std::size_t min, std::size_t max, std::string_view usage) const
    {
        if (words.size() < min || words.size() > max)
            fail("expected \"" + std::string(usage) + "\"");
    }

    TraceBuilder m_builder;
    int m_line = 0;
    std::int64_t m_clockNs = -1;
    std::map<std::string_view, std::string_view> m_options;
    std::optional<std::string_view> m_scopeOption;
    std::vector<OpenRange> m_openRanges;
    std::map<std::int64_t, std::pair<std::int64_t, int>> m_openSteps; // number -> (begin, line)
    std::map<std::string, std::uint64_t, std::less<>> m_blockAddresses;
    std::map<std::uint64_t, LiveBlock> m_live;
    std::map<std::uint64_t, LiveBlock> m_liveSegments;
    std::uint64_t m_nextAddress = 0x7f0000000000;
};

std::shared_ptr<const Trace> TraceTextParser::parse(std::string_view text)
{
    m_builder.setMeta(metakey::SourceFormat, "trace-text");
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t newline = text.find('\n', pos);
        if (newline == std::string_view::npos)
            newline = text.size();
        ++m_line;
        parseLine(text.substr(pos, newline - pos));
        pos = newline + 1;
    }
    if (!m_openRanges.empty()) {
        m_line = m_openRanges.back().line;
        fail("\"begin " + m_openRanges.back().scopeText + "\" is never ended");
    }
    if (!m_openSteps.empty()) {
        m_line = m_openSteps.begin()->second.second;
        fail("step " + std::to_string(m_openSteps.begin()->first) + " is never ended");
    }
    return m_builder.finish();
}

void TraceTextParser::parseLine(std::string_view line)
{
    if (auto hash = line.find('#'); hash != std::string_view::npos)
        line = line.substr(0, hash);
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    auto words = splitWords(line);
    if (words.empty())
        return;
    if (words[0] == "meta") {
        if (words.size() < 2)
            fail("expected \"meta KEY VALUE\"");
        const auto valueStart = static_cast<std::size_t>(words[1].data() - line.data()) + words[1].size();
        std::string_view value = line.substr(valueStart);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
            value.remove_suffix(1);
        m_builder.setMeta(words[1], std::string(value));
        return;
    }
    parseStatement(std::move(words));
}

void TraceTextParser::parseStatement(std::vector<std::string_view> words)
{
    const bool declaration = words[0] == "layer" || words[0] == "lane";
    const std::int64_t timeNs = declaration ? m_clockNs : takeTime(words);
    if (words.empty())
        fail("a time needs a statement after it");
    takeOptions(words);
    if (words.empty())
        fail("the line has options but no statement");
    try {
        const std::string_view verb = words[0];
        if (verb == "layer")
            declareLayer(words);
        else if (verb == "lane") {
            expectWords(words, 1, 1, "lane [device=cuda:0] [stream=N] [pool=G,U]");
            optionLane();
        } else if (verb == "begin")
            begin(words, timeNs);
        else if (verb == "end")
            end(words, timeNs);
        else if (verb == "alloc")
            alloc(words, timeNs);
        else if (verb == "free")
            free(words, timeNs);
        else if (verb == "reserve" || verb == "unreserve")
            reserve(words, timeNs, verb == "unreserve");
        else if (verb == "kernel")
            kernel(words, timeNs);
        else if (parseMarkerKind(verb))
            marker(words, timeNs, *parseMarkerKind(verb));
        else
            fail("unknown statement \"" + std::string(verb)
                 + "\" (expected meta, layer, lane, begin, end, alloc, free, reserve, unreserve, kernel, oom or snapshot)");
    } catch (const TraceTextError &) {
        throw;
    } catch (const Error &error) {
        fail(error.what());
    }
    for (const auto &[key, value] : m_options)
        fail("\"" + std::string(key) + "=\" does not apply to \"" + std::string(words[0]) + "\"");
}

std::int64_t TraceTextParser::takeTime(std::vector<std::string_view> &words)
{
    std::int64_t timeNs = m_clockNs + 1;
    const std::string_view first = words[0];
    if (first.starts_with("t=") || first.starts_with("+")) {
        const bool relative = first.front() == '+';
        const auto value = parseDuration(first.substr(relative ? 1 : 2));
        if (!value || *value < 0)
            fail("\"" + std::string(first) + "\" is not a time (write t=5ms or +2us)");
        const std::int64_t base = relative ? std::max<std::int64_t>(m_clockNs, 0) : 0;
        if (*value > INT64_MAX - base)
            fail("\"" + std::string(first) + "\" takes the time past what PeakLens can represent");
        timeNs = base + *value;
        words.erase(words.begin());
    }
    if (timeNs < m_clockNs)
        fail("time goes backwards: " + formatDuration(timeNs) + " comes after " + formatDuration(m_clockNs));
    m_clockNs = timeNs;
    return timeNs;
}

void TraceTextParser::takeOptions(std::vector<std::string_view> &words)
{
    m_options.clear();
    m_scopeOption.reset();
    std::vector<std::string_view> rest;
    for (std::string_view word : words) {
        if (word.starts_with('@')) {
            if (m_scopeOption)
                fail("more than one @scope");
            m_scopeOption = word.substr(1);
        } else if (auto eq = word.find('='); eq != std::string_view::npos && !rest.empty()) {
            if (!m_options.emplace(word.substr(0, eq), word.substr(eq + 1)).second)
                fail("\"" + std::string(word.substr(0, eq)) + "=\" is given twice");
        } else {
            rest.push_back(word);
        }
    }
    words = std::move(rest);
}

std::string TraceTextParser::takeStage()
{
    const auto text = option("stage");
    if (!text)
        return {};
    std::string stage = percentDecoded(*text);
    m_options.erase("stage");
    if (stage.empty())
        fail("\"stage=\" needs a name");
    return stage;
}

std::optional<std::string_view> TraceTextParser::option(std::string_view key) const
{
    auto it = m_options.find(key);
    if (it == m_options.end())
        return std::nullopt;
    return it->second;
}

std::uint32_t TraceTextParser::optionLane()
{
    Lane lane;
    if (auto device = option("device")) {
        auto parsed = Device::parse(*device);
        if (!parsed)
            fail("\"" + std::string(*device) + "\" is not a device (write cuda:0 or cpu)");
        lane.device = *parsed;
        m_options.erase("device");
    }
    if (auto stream = option("stream")) {
        auto [end, ec] = std::from_chars(stream->data(), stream->data() + stream->size(), lane.stream);
        if (ec != std::errc() || end != stream->data() + stream->size())
            fail("\"" + std::string(*stream) + "\" is not a stream number");
        m_options.erase("stream");
    }
    if (auto pool = option("pool")) {
        // "G,U": a snapshot's segment_pool_id (graph, user).
        const auto comma = pool->find(',');
        const auto number = [&](std::string_view text, std::int64_t &value) {
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            return ec == std::errc() && end == text.data() + text.size() && value >= 0;
        };
        if (comma == std::string_view::npos || !number(pool->substr(0, comma), lane.pool.graph)
            || !number(pool->substr(comma + 1), lane.pool.user))
            fail("\"" + std::string(*pool) + "\" is not a memory pool (write G,U as segment_pool_id names it: 1,0)");
        m_options.erase("pool");
    }
    return m_builder.lane(lane);
}

Scope TraceTextParser::parseScope(std::string_view text)
{
    const auto colon = text.find(':');
    const std::string_view phaseText = text.substr(0, colon);
    const auto phase = parsePhase(phaseText);
    if (!phase)
        fail("\"" + std::string(text) + "\" is not a scope (write fwd:PATH, bwd:PATH, opt or other:PATH)");
    Scope scope{*phase, kNoLayer};
    if (colon != std::string_view::npos)
        scope.layer = m_builder.layer(text.substr(colon + 1));
    return scope;
}

Scope TraceTextParser::eventScope()
{
    if (m_scopeOption)
        return parseScope(*m_scopeOption);
    if (!m_openRanges.empty())
        return parseScope(m_openRanges.back().scopeText);
    return {};
}

std::uint64_t TraceTextParser::blockAddress(std::string_view name, bool create)
{
    if (name.starts_with("0x")) {
        std::uint64_t address = 0;
        auto [end, ec] = std::from_chars(name.data() + 2, name.data() + name.size(), address, 16);
        if (ec != std::errc() || end != name.data() + name.size())
            fail("\"" + std::string(name) + "\" is not an address");
        return address;
    }
    if (auto it = m_blockAddresses.find(name); it != m_blockAddresses.end())
        return it->second;
    if (!create)
        fail("block \"" + std::string(name) + "\" was never allocated");
    const std::uint64_t address = m_nextAddress;
    m_nextAddress += 0x100000;
    m_blockAddresses.emplace(std::string(name), address);
    return address;
}

std::int64_t TraceTextParser::sizeArgument(std::string_view text) const
{
    const auto bytes = parseBytes(text);
    if (!bytes || *bytes <= 0)
        fail("\"" + std::string(text) + "\" is not a size (write 256, 4KiB or 1.5GiB)");
    return *bytes;
}

std::uint32_t TraceTextParser::stackOption()
{
    auto text = option("stack");
    if (!text)
        return StackTable::kEmptyStack;
    m_options.erase("stack");
    std::vector<Frame> frames;
    std::size_t pos = 0;
    while (pos <= text->size()) {
        auto semicolon = text->find(';', pos);
        if (semicolon == std::string_view::npos)
            semicolon = text->size();
        const std::string_view frameText = text->substr(pos, semicolon - pos);
        // function@file:line
        const auto at = frameText.rfind('@');
        const auto colon = frameText.rfind(':');
        Frame frame;
        if (at == std::string_view::npos || colon == std::string_view::npos || colon < at
            || std::from_chars(frameText.data() + colon + 1, frameText.data() + frameText.size(), frame.line).ptr
                   != frameText.data() + frameText.size())
            fail("\"" + std::string(frameText) + "\" is not a frame (write function@file:line)");
        frame.function = percentDecoded(frameText.substr(0, at));
        frame.file = percentDecoded(frameText.substr(at + 1, colon - at - 1));
        frames.push_back(std::move(frame));
        pos = semicolon + 1;
    }
    return m_builder.stacks().internStack(frames);
}

void TraceTextParser::declareLayer(const std::vector<std::string_view> &words)
{
    expectWords(words, 2, 2, "layer PATH [kind=KIND] [params=BYTES]");
    const std::uint32_t layer = m_builder.layer(words[1]);
    std::string kind(option("kind").value_or(std::string_view()));
    std::int64_t params = 0;
    if (auto text = option("params")) {
        auto bytes = parseBytes(*text);
        if (!bytes || *bytes < 0)
            fail("\"" + std::string(*text) + "\" is not a size");
        params = *bytes;
    }
    m_options.erase("kind");
    m_options.erase("params");
    m_builder.setLayerInfo(layer, std::move(kind), params);
}

void TraceTextParser::begin(const std::vector<std::string_view> &words, std::int64_t timeNs)
{
    if (words.size() == 3 && words[1] == "step") {
        std::int64_t number = 0;
        if (std::from_chars(words[2].data(), words[2].data() + words[2].size(), number).ptr != words[2].data() + words[2].size())
            fail("\"" + std::string(words[2]) + "\" is not a step number");
        if (!m_openSteps.emplace(number, std::pair(timeNs, m_line)).second)
            fail("step " + std::to_string(number) + " is already open");
        return;
    }
    expectWords(words, 2, 2, "begin step N | begin fwd:PATH | begin bwd:PATH | begin opt");
    const Scope scope = parseScope(words[1]);
    std::uint32_t thread = 0;
    if (auto text = option("thread")) {
        if (std::from_chars(text->data(), text->data() + text->size(), thread).ptr != text->data() + text->size())
            fail("\"" + std::string(*text) + "\" is not a thread number");
        m_options.erase("thread");
    }
    const std::string stage = takeStage();
    const std::int64_t step = m_openSteps.empty() ? kNoStep : m_openSteps.rbegin()->first;
    m_openRanges.push_back({std::string(words[1]), stage, thread, m_builder.current().ranges.size(), m_line});
    m_builder.addRange(
        Range{scope.layer, scope.phase, step, timeNs, timeNs, thread, stage.empty() ? kNoStage : m_builder.stageName(stage)});
}

void TraceTextParser::end(const std::vector<std::string_view> &words, std::int64_t timeNs)
{
    if (words.size() == 3 && words[1] == "step") {
        std::int64_t number = 0;
        std::from_chars(words[2].data(), words[2].data() + words[2].size(), number);
        auto it = m_openSteps.find(number);
        if (it == m_openSteps.end())
            fail("step " + std::string(words[2]) + " is not open");
        m_builder.addStep(Step{number, it->second.first, timeNs});
        m_openSteps.erase(it);
        return;
    }
    expectWords(words, 2, 2, "end step N | end SCOPE [stage=NAME]");
    const std::string stage = takeStage();
    for (auto it = m_openRanges.rbegin(); it != m_openRanges.rend(); ++it) {
        if (it->scopeText != words[1] || it->stage != stage)
            continue;
        m_builder.endRange(it->rangeIndex, timeNs);
        m_openRanges.erase(std::next(it).base());
        return;
    }
    fail("\"end " + std::string(words[1]) + "\" has no matching begin");
}

void TraceTextParser::alloc(const std::vector<std::string_view> &words, std::int64_t timeNs)
{
    expectWords(words, 3, 4, "alloc BLOCK SIZE [CATEGORY] [@SCOPE] [device=..] [stream=..] [stack=..]");
    const std::uint64_t address = blockAddress(words[1], true);
    MemoryEvent event;
    event.timeNs = timeNs;
    event.addr = address;
    event.deltaBytes = sizeArgument(words[2]);
    if (words.size() == 4) {
        auto category = parseCategory(words[3]);
        if (!category)
            fail("\"" + std::string(words[3])
                 + "\" is not a category (parameter, optimizer_state, input, "
                   "temporary, activation, gradient, autograd_detail or unknown)");
        event.category = *category;
    }
    event.lane = optionLane();
    event.stack = stackOption();
    const Scope scope = eventScope();
    event.layer = scope.layer;
    event.phase = scope.phase;
    if (!m_live.emplace(address, LiveBlock{event.deltaBytes, event.category, event.lane}).second)
        fail("block \"" + std::string(words[1]) + "\" is already allocated");
    m_builder.addEvent(event);
}

void TraceTextParser::free(const std::vector<std::string_view> &words, std::int64_t timeNs)
{
    expectWords(words, 2, 4, "free BLOCK [SIZE] [CATEGORY] [@SCOPE]");
    const std::uint64_t address = blockAddress(words[1], false);
    auto live = m_live.find(address);
    if (live == m_live.end() && words.size() < 3)
        fail("block \"" + std::string(words[1]) + "\" is not allocated; give its size to free it anyway");
    const bool known = live != m_live.end();
    LiveBlock block = known ? live->second : LiveBlock{};
    if (known)
        m_live.erase(live);
    if (words.size() >= 3)
        block.bytes = sizeArgument(words[2]);
    if (words.size() == 4) {
        auto category = parseCategory(words[3]);
        if (!category)
            fail("\"" + std::string(words[3]) + "\" is not a category");
        block.category = *category;
    }
    if (!known || option("device") || option("stream") || option("pool"))
        block.lane = optionLane();
    MemoryEvent event;
    event.timeNs = timeNs;
    event.addr = address;
    event.deltaBytes = -block.bytes;
    event.category = block.category;
    event.lane = block.lane;
    event.stack = stackOption();
    const Scope scope = eventScope();
    event.layer = scope.layer;
    event.phase = scope.phase;
    m_builder.addEvent(event);
}

void TraceTextParser::reserve(const std::vector<std::string_view> &words, std::int64_t timeNs, bool release)
{
    ReservedEvent event;
    event.timeNs = timeNs;
    if (!release) {
        expectWords(words, 3, 3, "reserve SEGMENT SIZE [device=..] [stream=..]");
        event.addr = blockAddress(words[1], true);
        event.deltaBytes = sizeArgument(words[2]);
        event.lane = optionLane();
        if (!m_liveSegments.emplace(event.addr, LiveBlock{event.deltaBytes, Category::Unknown, event.lane}).second)
            fail("segment \"" + std::string(words[1]) + "\" is already reserved");
    } else {
        expectWords(words, 2, 3, "unreserve SEGMENT [SIZE]");
        event.addr = blockAddress(words[1], false);
        auto live = m_liveSegments.find(event.addr);
        if (live == m_liveSegments.end() && words.size() < 3)
            fail("segment \"" + std::string(words[1]) + "\" is not reserved; give its size to release it anyway");
        const bool known = live != m_liveSegments.end();
        LiveBlock segment = known ? live->second : LiveBlock{};
        if (known)
            m_liveSegments.erase(live);
        if (words.size() == 3)
            segment.bytes = sizeArgument(words[2]);
        if (!known || option("device") || option("stream") || option("pool"))
            segment.lane = optionLane();
        event.deltaBytes = -segment.bytes;
        event.lane = segment.lane;
    }
    m_builder.addReserved(event);
}

void TraceTextParser::kernel(const std::vector<std::string_view> &words, std::int64_t timeNs)
{
    expectWords(words, 3, 3, "kernel NAME DURATION [device=..] [stream=..]");
    const auto duration = parseDuration(words[2]);
    if (!duration || *duration < 0)
        fail("\"" + std::string(words[2]) + "\" is not a duration");
    Kernel kernel;
    kernel.name = m_builder.kernelName(percentDecoded(words[1]));
    kernel.lane = optionLane();
    kernel.beginNs = timeNs;
    kernel.endNs = timeNs + *duration;
    m_builder.addKernel(kernel);
}

void TraceTextParser::marker(const std::vector<std::string_view> &words, std::int64_t timeNs, MarkerKind kind)
{
    expectWords(words, 2, 2, std::string(markerKindName(kind)) + " BYTES [device=..] [stream=..]");
    const auto bytes = parseBytes(words[1]);
    if (!bytes || *bytes < 0)
        fail("\"" + std::string(words[1]) + "\" is not a size");
    m_builder.addMarker(Marker{timeNs, optionLane(), kind, *bytes});
}

} // namespace

std::shared_ptr<const Trace> parseTraceText(std::string_view text)
{
    return TraceTextParser().parse(text);
}

} // namespace peaklens
