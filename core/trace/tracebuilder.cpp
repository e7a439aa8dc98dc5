// SPDX-License-Identifier: Apache-2.0
#include "tracebuilder.h"

#include "lifetimecategories.h"
#include "loadbudget.h"
#include "metadata.h"
#include "visibletext.h"

#include "core/error.h"

#include <algorithm>

namespace peaklens {

TraceBuilder::TraceBuilder()
    : m_trace(std::make_unique<Trace>())
{
}

void TraceBuilder::setMeta(std::string_view key, std::string_view value)
{
    // Values may hold several lines.
    LoadBudget::charge(key.size() + value.size() + kEntryBytes, "metadata");
    m_trace->meta.insert_or_assign(visibleText(key), visibleLines(value));
}

std::uint32_t TraceBuilder::lane(const Lane &lane)
{
    auto it = m_laneIds.find(lane);
    if (it != m_laneIds.end())
        return it->second;
    if (m_trace->lanes.size() >= MemoryEvents::kMaxLanes)
        throw Error("The trace uses more than " + std::to_string(MemoryEvents::kMaxLanes)
                    + " distinct device streams, more than PeakLens can hold.");
    const auto id = static_cast<std::uint32_t>(m_trace->lanes.size());
    m_trace->lanes.push_back(lane);
    m_laneIds.emplace(lane, id);
    return id;
}

std::uint32_t TraceBuilder::layer(std::string_view given)
{
    if (auto it = m_layerIds.find(given); it != m_layerIds.end())
        return it->second;
    if (given.empty())
        throw Error("A layer needs a non-empty module path.");
    if (static_cast<std::size_t>(std::count(given.begin(), given.end(), '.')) >= kMaxLayerDepth)
        throw Error("The layer path \"" + visibleText(given.substr(0, 80)) + "...\" nests deeper than "
                    + std::to_string(kMaxLayerDepth) + " modules.");
    if (given.size() > kMaxLayerPathBytes)
        throw Error("The layer path \"" + visibleText(given.substr(0, 80)) + "...\" is " + std::to_string(given.size())
                    + " bytes long; module paths are far shorter, and PeakLens reads at most "
                    + std::to_string(kMaxLayerPathBytes) + ".");
    const std::string shown = isVisibleText(given) ? std::string() : visibleText(given);
    const std::string_view path = shown.empty() ? given : std::string_view(shown);
    if (auto it = m_layerIds.find(path); it != m_layerIds.end())
        return it->second;
    // The path and those of its ancestors not yet known, deepest first.
    std::vector<std::string_view> missing{path};
    std::uint32_t parent = kNoLayer;
    for (std::string_view prefix = path;;) {
        const auto dot = prefix.rfind('.');
        if (dot == std::string_view::npos || dot == 0)
            break;
        prefix = prefix.substr(0, dot);
        if (auto it = m_layerIds.find(prefix); it != m_layerIds.end()) {
            parent = it->second;
            break;
        }
        missing.push_back(prefix);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (m_trace->layers.size() >= kNoLayer)
            throw Error("The trace has more than " + std::to_string(kNoLayer) + " layers, more than PeakLens can hold.");
        const auto id = static_cast<std::uint32_t>(m_trace->layers.size());
        LoadBudget::charge(2 * (it->size() + kEntryBytes), "layer paths"); // the layer and its index
        m_trace->layers.push_back(Layer{std::string(*it), {}, parent, 0});
        m_layerIds.emplace(std::string(*it), id);
        parent = id;
    }
    return parent;
}

void TraceBuilder::setLayerInfo(std::uint32_t layer, std::string_view kind, std::int64_t parameterBytes)
{
    Layer &target = m_trace->layers.at(layer);
    target.kind = visibleText(kind);
    target.parameterBytes = parameterBytes;
}

namespace {

// The index of `name` in `names`, added (as visibleText shows it) when new.
std::uint32_t internName(std::map<std::string, std::uint32_t, std::less<>> &ids, std::vector<std::string> &names,
                         std::string_view name, std::size_t entryBytes, const char *what)
{
    auto [it, inserted] = ids.try_emplace(std::string(name), static_cast<std::uint32_t>(names.size()));
    if (inserted) {
        LoadBudget::charge(2 * (name.size() + entryBytes), what);
        names.push_back(visibleText(name));
    }
    return it->second;
}

} // namespace

std::uint32_t TraceBuilder::kernelName(std::string_view name)
{
    return internName(m_kernelNameIds, m_trace->kernelNames, name, kEntryBytes, "kernel names");
}

std::uint32_t TraceBuilder::stageName(std::string_view name)
{
    return internName(m_stageNameIds, m_trace->stageNames, name, kEntryBytes, "stage names");
}

void TraceBuilder::checkLane(std::uint32_t lane) const
{
    if (lane >= m_trace->lanes.size())
        throw Error("An event refers to device stream " + std::to_string(lane) + ", which the trace does not define.");
}

void TraceBuilder::checkSize(std::int64_t deltaBytes) const
{
    if (deltaBytes > kMaxEventBytes || deltaBytes < -kMaxEventBytes)
        throw Error("An event of " + std::to_string(deltaBytes) + " bytes is larger than any device's memory.");
}

void TraceBuilder::addEvent(const MemoryEvent &event)
{
    checkLane(event.lane);
    checkSize(event.deltaBytes);
    if (event.layer != kNoLayer && event.layer >= m_trace->layers.size())
        throw Error("An event refers to layer " + std::to_string(event.layer) + ", which the trace does not define.");
    if (event.stack >= m_trace->stacks.stackCount())
        throw Error("An event refers to stack " + std::to_string(event.stack) + ", which the trace does not define.");
    if (event.stack >= MemoryEvents::kMaxStacks)
        throw Error("The trace has more than " + std::to_string(MemoryEvents::kMaxStacks)
                    + " distinct call stacks, more than PeakLens can hold.");
    if (m_trace->events.size() >= UINT32_MAX)
        throw Error("The trace has more than 4 billion memory events, more than PeakLens can hold.");
    growTo(m_chargedEvents, m_trace->events.size() + 1, kEventBytes, "memory events");
    m_trace->events.append(event);
}

MemoryEvents::Slots TraceBuilder::appendEvents(std::size_t count)
{
    if (count > UINT32_MAX - m_trace->events.size())
        throw Error("The trace has more than 4 billion memory events, more than PeakLens can hold.");
    growTo(m_chargedEvents, m_trace->events.size() + count, kEventBytes, "memory events");
    return m_trace->events.appendUninitialized(count);
}

void TraceBuilder::reserveEvents(std::size_t count)
{
    growTo(m_chargedEvents, count, kEventBytes, "memory events");
    m_trace->events.reserve(count);
}

void TraceBuilder::growTo(std::size_t &charged, std::size_t count, std::size_t itemBytes, std::string_view what)
{
    if (count <= charged)
        return;
    // In steps, so that the hot path only compares.
    const std::size_t more = std::max<std::size_t>(count - charged, kChargeStep);
    LoadBudget::charge(more * itemBytes, what);
    charged += more;
}

void TraceBuilder::addReserved(const ReservedEvent &event)
{
    checkLane(event.lane);
    checkSize(event.deltaBytes);
    growTo(m_chargedOther, ++m_otherCount, sizeof(ReservedEvent), "reserved-memory events");
    m_trace->reserved.push_back(event);
}

void TraceBuilder::addRange(const Range &range)
{
    if (range.layer != kNoLayer && range.layer >= m_trace->layers.size())
        throw Error("A range refers to layer " + std::to_string(range.layer) + ", which the trace does not define.");
    if (range.stage != kNoStage && range.stage >= m_trace->stageNames.size())
        throw Error("A range refers to a stage name the trace does not define.");
    if (range.endNs < range.beginNs)
        throw Error("A range ends before it begins.");
    growTo(m_chargedOther, ++m_otherCount, sizeof(Range), "ranges");
    m_trace->ranges.push_back(range);
}

void TraceBuilder::endRange(std::size_t index, std::int64_t endNs)
{
    Range &range = m_trace->ranges.at(index);
    if (endNs < range.beginNs)
        throw Error("A range ends before it begins.");
    range.endNs = endNs;
}

void TraceBuilder::addStep(const Step &step)
{
    if (step.endNs < step.beginNs)
        throw Error("Step " + std::to_string(step.number) + " ends before it begins.");
    growTo(m_chargedOther, ++m_otherCount, sizeof(Step), "steps");
    m_trace->steps.push_back(step);
}

void TraceBuilder::addKernel(const Kernel &kernel)
{
    checkLane(kernel.lane);
    if (kernel.name >= m_trace->kernelNames.size())
        throw Error("A kernel refers to a name the trace does not define.");
    if (kernel.endNs < kernel.beginNs)
        throw Error("A kernel ends before it begins.");
    growTo(m_chargedOther, ++m_otherCount, sizeof(Kernel), "kernels");
    m_trace->kernels.push_back(kernel);
}

void TraceBuilder::addMarker(const Marker &marker)
{
    checkLane(marker.lane);
    growTo(m_chargedOther, ++m_otherCount, sizeof(Marker), "markers");
    m_trace->markers.push_back(marker);
}

namespace {
template<typename T, typename Key>
void sortBy(std::vector<T> &items, Key key)
{
    // Files and recorders mostly write in time order: a look is cheaper than a sort.
    const auto before = [&](const T &a, const T &b) { return key(a) < key(b); };
    if (!std::is_sorted(items.begin(), items.end(), before))
        std::stable_sort(items.begin(), items.end(), before);
}
} // namespace

void TraceBuilder::checkSpan() const
{
    const Trace &trace = *m_trace;
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    const auto see = [&](std::int64_t t) {
        first = std::min(first, t);
        last = std::max(last, t);
    };
    if (!trace.events.empty()) {
        see(trace.events.timeNs(0));
        see(trace.events.timeNs(trace.events.size() - 1));
    }
    for (const ReservedEvent &event : trace.reserved)
        see(event.timeNs);
    for (const Marker &marker : trace.markers)
        see(marker.timeNs);
    for (const Range &range : trace.ranges) {
        see(range.beginNs);
        see(range.endNs);
    }
    for (const Step &step : trace.steps) {
        see(step.beginNs);
        see(step.endNs);
    }
    for (const Kernel &kernel : trace.kernels) {
        see(kernel.beginNs);
        see(kernel.endNs);
    }
    if (first<last &&static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(first)> std::uint64_t(kMaxSpanNs))
        throw Error("Its times run from " + std::to_string(first) + " to " + std::to_string(last)
                    + " ns, more than 104 days apart: they are damaged.");
}

Trace TraceBuilder::takeAdded()
{
    Trace added;
    std::swap(added.events, m_trace->events);
    std::swap(added.reserved, m_trace->reserved);
    std::swap(added.ranges, m_trace->ranges);
    std::swap(added.steps, m_trace->steps);
    std::swap(added.kernels, m_trace->kernels);
    std::swap(added.markers, m_trace->markers);
    return added;
}

std::shared_ptr<const Trace> TraceBuilder::finish()
{
    m_trace->events.sortByTime();
    sortBy(m_trace->reserved, [](const ReservedEvent &e) { return e.timeNs; });
    sortBy(m_trace->ranges, [](const Range &r) { return r.beginNs; });
    sortBy(m_trace->steps, [](const Step &s) { return s.beginNs; });
    sortBy(m_trace->kernels, [](const Kernel &k) { return k.beginNs; });
    sortBy(m_trace->markers, [](const Marker &m) { return m.timeNs; });
    checkSpan();
    if (m_trace->metaValue(metakey::Categories) == "lifetime")
        classifyByLifetime(*m_trace);
    std::shared_ptr<const Trace> result(std::move(m_trace));
    m_trace = std::make_unique<Trace>();
    m_layerIds.clear();
    m_laneIds.clear();
    m_kernelNameIds.clear();
    m_stageNameIds.clear();
    m_chargedEvents = m_chargedOther = m_otherCount = 0;
    return result;
}

} // namespace peaklens
