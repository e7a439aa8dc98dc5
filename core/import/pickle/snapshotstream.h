// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads a pickled PyTorch memory snapshot while the unpickler decodes it: a device trace's
// entries go to the SnapshotAssembler as their bytes are read (or batch by batch where an
// entry holds more than plain values), the segments with their blocks batch by batch, and
// what was decoded for them is released, so the snapshot is never held whole. Which list is
// which is judged from where it stands on the stack, as PyTorch lays snapshots out; the
// root, once known, must agree (see StreamedParts).

#include "snapshotassembler.h"
#include "streamsink.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace peaklens::pickle {

// The lists whose items were read while streaming, by container, for the reading of the
// root afterwards: each must be where the root puts it, and hold nothing else.
struct StreamedParts
{
    struct DeviceList
    {
        std::size_t device = 0;
        std::size_t entries = 0; // read so far
    };
    std::optional<std::uint32_t> segments;
    std::unordered_map<std::uint32_t, DeviceList> deviceLists;
};

class SnapshotStream final : public StreamSink
{
public:
    SnapshotStream(SnapshotAssembler &assembler, const std::string &path);

    bool takeItems(const Document &document, const StackView &stack, std::size_t target, std::span<const Value> items) override;
    bool takesEntriesOf(const Document &document, const StackView &stack, std::size_t target) override;
    void takeEntry(const Document &document, std::span<const Value> pairs) override;
    Value standIn(const Value &container) const override { return m_assembler.standIn(container); }
    void released(std::size_t first) override;

    const StreamedParts &parts() const { return m_parts; }
    // True once reading a batch failed: the layout may have been misjudged, so the whole
    // document is to be read for the verdict.
    bool failedWhileReading() const { return m_failed; }

private:
    // Runs `read`, remembering whether it failed.
    template<typename Read>
    auto noteFailure(Read read);
    bool take(const Document &document, const StackView &stack, std::size_t target, std::span<const Value> items);
    // The device trace the list at `target` is, registered on first sight; nullptr for none.
    StreamedParts::DeviceList *deviceTrace(const Document &document, const StackView &stack, std::size_t target);
    void makeRoom(const StreamedParts::DeviceList &trace, const StackView &stack, std::size_t entries);
    // Charges entries to the load ahead, a step at a time.
    void charge(std::size_t entries);
    // Where the value of `key` in the root dict stands, while the root is being filled.
    static std::optional<std::size_t> rootValuePosition(const StackView &stack, std::string_view key);
    static bool isSegmentsList(const StackView &stack, std::size_t target);
    // The device whose trace the list at `target` is: an item of the root's "device_traces".
    static std::optional<std::size_t> deviceOf(const Document &document, const StackView &stack, std::size_t target);
    [[noreturn]] void failLayout(const std::string &problem) const;

    SnapshotAssembler &m_assembler;
    const std::string &m_path;
    StreamedParts m_parts;
    StreamedParts::DeviceList *m_entryTrace = nullptr; // whose entries takeEntry reads
    std::size_t m_entriesCharged = 0, m_entriesRead = 0;
    bool m_failed = false;
};

} // namespace peaklens::pickle
