// SPDX-License-Identifier: Apache-2.0
#include "torchsnapshot.h"

#include "core/error.h"
#include "pickle/snapshotassembler.h"
#include "pickle/snapshotstream.h"
#include "pickle/unpickler.h"

namespace peaklens {

namespace {

using pickle::Document;
using pickle::SnapshotAssembler;
using pickle::SnapshotStream;
using pickle::StreamedParts;
using pickle::Value;

[[noreturn]] void failLayout(const std::string &path)
{
    throw pickle::OnePassError(path, "lists read while streaming are not where the snapshot's root puts them");
}

// The segments list, when streaming read its items already: it must be that list, and empty.
bool segmentsWereStreamed(const Document &document, const Value &segments, const StreamedParts &streamed, const std::string &path)
{
    if (!streamed.segments)
        return false;
    if (!segments.isSequence() || *streamed.segments != segments.container || document.itemCount(segments) != 0)
        failLayout(path);
    return true;
}

// Reads what the root holds and streaming did not read; returns whether it has device traces.
bool readSnapshot(const Document &document, SnapshotAssembler &assembler, const StreamedParts &streamed, const std::string &path)
{
    assembler.noteTrailingBytes(document.trailingBytes);
    const Value &root = document.root;
    const Value *segments = nullptr;
    const Value *traces = nullptr;
    const Value *annotations = nullptr;
    if (root.isSequence()) {
        const auto items = document.items(root);
        if (!items.empty() && !items.front().isDict())
            assembler.fail("is not a PyTorch memory snapshot: it is a list, but not of segments");
        segments = &root; // the oldest form: a bare list of segments
    } else if (root.isDict()) {
        segments = document.find(root, "segments");
        traces = document.find(root, "device_traces");
        annotations = document.find(root, "external_annotations");
        assembler.readSettings(document, document.find(root, "allocator_settings"));
    }
    if (!segments && !traces)
        assembler.fail("is not a PyTorch memory snapshot: it has neither \"segments\" nor \"device_traces\"");
    if (segments && !segmentsWereStreamed(document, *segments, streamed, path))
        assembler.readSegments(document, assembler.expectSequence(document, *segments, "segments"));
    else if (!segments && streamed.segments)
        failLayout(path);
    if (annotations)
        assembler.readAnnotations(document, assembler.expectSequence(document, *annotations, "external_annotations"));
    if (!traces) {
        if (!streamed.deviceLists.empty())
            failLayout(path);
        return false;
    }
    const auto devices = assembler.expectSequence(document, *traces, "device_traces");
    std::size_t total = 0, streamedFound = 0;
    for (std::size_t d = 0; d < devices.size(); ++d) {
        const std::size_t entries = assembler.expectSequence(document, devices[d], "a device trace").size();
        if (auto it = streamed.deviceLists.find(devices[d].container); it != streamed.deviceLists.end()) {
            if (it->second.device != d || entries != 0)
                failLayout(path);
            ++streamedFound;
        }
        total += entries;
    }
    if (streamedFound != streamed.deviceLists.size())
        failLayout(path);
    // Counted before anything is built: a pickle may list one shared trace many times.
    assembler.chargeEntries(total);
    assembler.expectEntries(total);
    if (devices.size() > static_cast<std::size_t>(INT16_MAX))
        assembler.fail("is not a valid memory snapshot: it has traces for " + std::to_string(devices.size()) + " devices");
    for (std::size_t d = 0; d < devices.size(); ++d) {
        if (!streamed.deviceLists.count(devices[d].container))
            assembler.readDeviceTrace(document, d, document.items(devices[d]), 0);
    }
    return true;
}

} // namespace

std::shared_ptr<const Trace> readTorchSnapshotInOnePass(Document &document, const std::string &path, const Progress &progress)
{
    SnapshotAssembler assembler(path, progress);
    SnapshotStream stream(assembler, path);
    bool hasTraces = false;
    try {
        pickle::unpickle(document, path, progress, &stream);
        hasTraces = readSnapshot(document, assembler, stream.parts(), path);
    } catch (const pickle::OnePassError &) {
        return nullptr;
    } catch (const ImportError &) {
        // Reading a batch failed: whether the batch was judged right, the whole document says.
        if (stream.failedWhileReading())
            return nullptr;
        throw;
    }
    document = Document{}; // the file's bytes and what is left of the pickle: not needed to finish
    return assembler.finish(hasTraces);
}

std::shared_ptr<const Trace> importTorchSnapshot(const Document &document, const std::string &path, const Progress &progress)
{
    SnapshotAssembler assembler(path, progress);
    const bool hasTraces = readSnapshot(document, assembler, StreamedParts{}, path);
    return assembler.finish(hasTraces);
}

std::shared_ptr<const Trace> streamTorchSnapshot(FileBytes bytes, const std::string &path, const Progress &progress)
{
    Document document;
    document.bytes = std::move(bytes);
    if (auto trace = readTorchSnapshotInOnePass(document, path, progress))
        return trace;
    Document whole;
    whole.bytes = std::move(document.bytes);
    document = Document{};
    pickle::unpickle(whole, path, progress);
    return importTorchSnapshot(whole, path, progress);
}

} // namespace peaklens
