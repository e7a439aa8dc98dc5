// SPDX-License-Identifier: Apache-2.0
#include "snapshotstream.h"

#include <algorithm>

namespace peaklens::pickle {

namespace {
// A snapshot's root has a handful of keys, and a machine a handful of devices: lists
// standing further out are left to the reading of the whole document.
constexpr std::size_t kMaxRootKeys = 64;
constexpr std::size_t kMaxStreamedDevices = 256;
// Fewer bytes than a pickled trace entry with an action and an address takes (PyTorch's
// take 40 and more): room reserved for one event per so many bytes is rarely outgrown.
constexpr std::size_t kBytesPerEntry = 24;
// Entries are charged to the load this many at a time, so that each costs a comparison.
constexpr std::size_t kChargeStep = 4096;
} // namespace

SnapshotStream::SnapshotStream(SnapshotAssembler &assembler, const std::string &path)
    : m_assembler(assembler)
    , m_path(path)
{
}

void SnapshotStream::failLayout(const std::string &problem) const
{
    throw OnePassError(m_path, problem);
}

template<typename Read>
auto SnapshotStream::noteFailure(Read read)
{
    try {
        return read();
    } catch (const ImportError &) {
        m_failed = true;
        throw;
    }
}

bool SnapshotStream::takeItems(const Document &document, const StackView &stack, std::size_t target, std::span<const Value> items)
{
    return noteFailure([&] { return take(document, stack, target, items); });
}

bool SnapshotStream::take(const Document &document, const StackView &stack, std::size_t target, std::span<const Value> items)
{
    const Value &list = stack.values[target];
    const bool known = m_parts.segments == list.container || m_parts.deviceLists.count(list.container);
    // A list filled without the sink stays so: its items are in the document.
    if (!known && document.itemCount(list) > 0)
        return false;
    if (isSegmentsList(stack, target)) {
        if (!known && m_parts.segments)
            failLayout("it has a second list of segments");
        if (m_parts.deviceLists.count(list.container))
            failLayout("one list is read both as a device's trace and as segments");
        // The oldest form is a bare list of segments: a list of anything else is no snapshot,
        // which the reading of the whole document says.
        if (target == 0 && !known && !items.empty() && !items.front().isDict())
            return false;
        m_parts.segments = list.container;
        m_assembler.readSegments(document, items);
        return true;
    }
    StreamedParts::DeviceList *trace = deviceTrace(document, stack, target);
    if (!trace)
        return false;
    makeRoom(*trace, stack, items.size());
    charge(items.size());
    m_assembler.readDeviceTrace(document, trace->device, items, trace->entries);
    trace->entries += items.size();
    return true;
}

StreamedParts::DeviceList *SnapshotStream::deviceTrace(const Document &document, const StackView &stack, std::size_t target)
{
    const Value &list = stack.values[target];
    const std::optional<std::size_t> device = deviceOf(document, stack, target);
    if (!device)
        return nullptr;
    if (m_parts.segments == list.container)
        failLayout("one list is read both as segments and as a device's trace");
    auto [trace, inserted] = m_parts.deviceLists.try_emplace(list.container, StreamedParts::DeviceList{*device, 0});
    if (trace->second.device != *device)
        failLayout("one list is read as the trace of two devices");
    return &trace->second;
}

bool SnapshotStream::takesEntriesOf(const Document &document, const StackView &stack, std::size_t target)
{
    return noteFailure([&] {
        const Value &list = stack.values[target];
        const bool known = m_parts.deviceLists.count(list.container);
        m_entryTrace = known || document.itemCount(list) == 0 ? deviceTrace(document, stack, target) : nullptr;
        if (m_entryTrace)
            makeRoom(*m_entryTrace, stack, 0);
        return m_entryTrace != nullptr;
    });
}

void SnapshotStream::takeEntry(const Document &document, std::span<const Value> pairs)
{
    noteFailure([&] {
        charge(1);
        m_assembler.readEntry(document, m_entryTrace->device, pairs, m_entryTrace->entries++);
    });
}

void SnapshotStream::makeRoom(const StreamedParts::DeviceList &trace, const StackView &stack, std::size_t entries)
{
    // Room for the rest of the file as this device's events, once: copied as their vector
    // grew, they would be touched twice over.
    if (trace.entries == 0)
        m_assembler.reserveEvents(trace.device, entries + (stack.bytesTotal - stack.bytesRead) / kBytesPerEntry);
}

void SnapshotStream::charge(std::size_t entries)
{
    m_entriesRead += entries;
    if (m_entriesRead <= m_entriesCharged)
        return;
    const std::size_t more = std::max<std::size_t>(m_entriesRead - m_entriesCharged, kChargeStep);
    m_assembler.chargeEntries(more);
    m_entriesCharged += more;
}

void SnapshotStream::released(std::size_t first)
{
    // A list read here must outlive the reading: the root is checked against it at the end.
    if (m_parts.segments && *m_parts.segments >= first)
        failLayout("the list read as its segments was released before the end");
    for (const auto &[container, list] : m_parts.deviceLists) {
        if (container >= first)
            failLayout("a list read as a device's trace was released before the end");
    }
    m_assembler.forgetFrom(first);
}

std::optional<std::size_t> SnapshotStream::rootValuePosition(const StackView &stack, std::string_view key)
{
    const std::span<const Value> values = stack.values;
    if (values.empty() || !values[0].isDict())
        return std::nullopt;
    const auto isKey = [&](std::size_t position) { return values[position].isString() && values[position].string() == key; };
    // One SETITEM for the root's only key, or SETITEMS after a MARK: keys and values in turn.
    if (!stack.hasMarkAt(1))
        return values.size() > 2 && isKey(1) ? std::optional<std::size_t>(2) : std::nullopt;
    for (std::size_t k = 1; k + 1 < values.size() && k < 2 * kMaxRootKeys; k += 2) {
        if (!values[k].isString())
            return std::nullopt; // no key: the root's pairs end before
        if (isKey(k))
            return k + 1;
    }
    return std::nullopt;
}

bool SnapshotStream::isSegmentsList(const StackView &stack, std::size_t target)
{
    if (target == 0)
        return stack.values[0].kind == Kind::List;
    return rootValuePosition(stack, "segments") == target;
}

std::optional<std::size_t> SnapshotStream::deviceOf(const Document &document, const StackView &stack, std::size_t target)
{
    const std::optional<std::size_t> traces = rootValuePosition(stack, "device_traces");
    if (!traces || *traces >= target || stack.values[*traces].kind != Kind::List)
        return std::nullopt;
    const Value &devices = stack.values[*traces];
    const std::size_t first = *traces + 1;
    // The only device, added by APPEND without a MARK.
    if (target == first && !stack.hasMarkAt(first))
        return document.itemCount(devices);
    // One of a batch after a MARK: the lists before it in the batch are earlier devices.
    if (!stack.hasMarkAt(first) || target - first >= kMaxStreamedDevices || stack.hasMarkWithin(first + 1, target))
        return std::nullopt;
    for (std::size_t p = first; p < target; ++p) {
        if (stack.values[p].kind != Kind::List)
            return std::nullopt;
    }
    return document.itemCount(devices) + (target - first);
}

} // namespace peaklens::pickle
