// SPDX-License-Identifier: Apache-2.0
// Printer of PeakLens trace text: everything in a Trace, in an order that parses back to it.

#include "tracetext.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <tuple>

namespace peaklens {

namespace {

std::string percentEncoded(std::string_view text)
{
    std::string result;
    for (char c : text) {
        if (c == ' ' || c == '%' || c == ';' || c == '#' || c == '\t' || c == '\n' || c == '=') {
            char buffer[4];
            std::snprintf(buffer, sizeof buffer, "%%%02X", static_cast<unsigned char>(c));
            result += buffer;
        } else {
            result.push_back(c);
        }
    }
    return result;
}

std::string hex(std::uint64_t value)
{
    char buffer[24];
    std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
    return buffer;
}

std::string scopeText(const Trace &trace, Phase phase, std::uint32_t layer)
{
    std::string text(phase == Phase::Other ? std::string_view("other") : phasePrefix(phase));
    if (layer != kNoLayer)
        text += ":" + trace.layers[layer].path;
    return text;
}

// Lane options are left out where they are the defaults, unless `always`.
std::string laneOptions(const Trace &trace, std::uint32_t lane, bool always = false)
{
    const Lane &l = trace.lanes[lane];
    std::string text;
    if (always || l.device != Device{})
        text += " device=" + l.device.toString();
    if (always || l.stream != 0)
        text += " stream=" + std::to_string(l.stream);
    if (!l.pool.isDefault()) // where a lane is spelled out, an unnamed pool is the default one
        text += " pool=" + std::to_string(l.pool.graph) + "," + std::to_string(l.pool.user);
    return text;
}

std::string stackOption(const Trace &trace, std::uint32_t stack)
{
    if (stack == StackTable::kEmptyStack)
        return {};
    auto frames = trace.stacks.framesOf(stack);
    std::reverse(frames.begin(), frames.end());
    std::string text = " stack=";
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const Frame &frame = trace.stacks.frames()[frames[i]];
        if (i > 0)
            text += ';';
        text += percentEncoded(frame.function) + "@" + percentEncoded(frame.file) + ":" + std::to_string(frame.line);
    }
    return text;
}

// One timed line; lines print in (time, rank, order) order.
struct TimedLine
{
    std::int64_t timeNs;
    int rank; // at equal times: ends, then begins, then events, then zero-length ends
    std::int64_t order;
    std::string text;
};

struct LiveBlock
{
    std::int64_t bytes;
    Category category;
    std::uint32_t lane;
};

} // namespace

std::string printTraceText(const Trace &trace)
{
    std::string out;
    for (const auto &[key, value] : trace.meta)
        out.append("meta ").append(key).append(" ").append(value).append("\n");
    for (std::uint32_t lane = 0; lane < trace.lanes.size(); ++lane)
        out += "lane" + laneOptions(trace, lane) + "\n";
    for (const Layer &layer : trace.layers) {
        out += "layer " + layer.path;
        if (!layer.kind.empty())
            out += " kind=" + percentEncoded(layer.kind);
        if (layer.parameterBytes != 0)
            out += " params=" + std::to_string(layer.parameterBytes);
        out += "\n";
    }

    std::vector<TimedLine> lines;
    std::int64_t order = 0;
    for (const Step &step : trace.steps) {
        lines.push_back({step.beginNs, 1, order++, "begin step " + std::to_string(step.number)});
        lines.push_back({step.endNs, step.endNs == step.beginNs ? 3 : 0, -order, "end step " + std::to_string(step.number)});
    }
    for (const Range &range : trace.ranges) {
        const std::string scope = scopeText(trace, range.phase, range.layer);
        const std::string thread = range.thread != 0 ? " thread=" + std::to_string(range.thread) : std::string();
        const std::string stage =
            range.stage != kNoStage ? " stage=" + percentEncoded(trace.stageNames[range.stage]) : std::string();
        lines.push_back({range.beginNs, 1, order++, std::string("begin ").append(scope).append(thread).append(stage)});
        lines.push_back(
            {range.endNs, range.endNs == range.beginNs ? 3 : 0, -order, std::string("end ").append(scope).append(stage)});
    }
    std::map<std::uint64_t, LiveBlock> live;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        const MemoryEvent e = trace.events.at(i);
        std::string text;
        // Always explicit: without it an event would take the scope of the range around it.
        const std::string scope = " @" + scopeText(trace, e.phase, e.layer);
        if (e.deltaBytes > 0) {
            text = "alloc " + hex(e.addr) + " " + std::to_string(e.deltaBytes) + " " + std::string(categoryName(e.category))
                   + scope + laneOptions(trace, e.lane);
            live[e.addr] = {e.deltaBytes, e.category, e.lane};
        } else {
            text = "free " + hex(e.addr);
            auto it = live.find(e.addr);
            const bool matches = it != live.end() && it->second.bytes == -e.deltaBytes && it->second.category == e.category
                                 && it->second.lane == e.lane;
            if (!matches)
                text += " " + std::to_string(-e.deltaBytes) + " " + std::string(categoryName(e.category))
                        + laneOptions(trace, e.lane, true);
            if (it != live.end())
                live.erase(it);
            text += scope;
        }
        lines.push_back({e.timeNs, 2, order++, text + stackOption(trace, e.stack)});
    }
    for (const ReservedEvent &e : trace.reserved) {
        const std::string text = e.deltaBytes > 0 ? "reserve " + hex(e.addr) + " " + std::to_string(e.deltaBytes)
                                                  : "unreserve " + hex(e.addr) + " " + std::to_string(-e.deltaBytes);
        lines.push_back({e.timeNs, 2, order++, text + laneOptions(trace, e.lane, e.deltaBytes <= 0)});
    }
    for (const Kernel &k : trace.kernels) {
        lines.push_back({k.beginNs, 2, order++,
                         "kernel " + percentEncoded(trace.kernelNames[k.name]) + " " + std::to_string(k.endNs - k.beginNs)
                             + laneOptions(trace, k.lane)});
    }
    for (const Marker &m : trace.markers) {
        lines.push_back({m.timeNs, 2, order++,
                         std::string(markerKindName(m.kind)) + " " + std::to_string(m.bytes) + laneOptions(trace, m.lane)});
    }
    std::stable_sort(lines.begin(), lines.end(), [](const TimedLine &a, const TimedLine &b) {
        return std::tie(a.timeNs, a.rank, a.order) < std::tie(b.timeNs, b.rank, b.order);
    });

    std::int64_t clock = -1;
    for (const TimedLine &line : lines) {
        if (line.timeNs != clock + 1)
            out += "t=" + std::to_string(line.timeNs) + " ";
        out += line.text + "\n";
        clock = line.timeNs;
    }
    return out;
}

} // namespace peaklens
