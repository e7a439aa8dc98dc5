#include "traceloader.h"

#include "core/error.h"
#include "core/format/readablefile.h"
#include "core/format/tracereader.h"
#include "core/trace/tracetext.h"
#include "filebytes.h"
#include "kineto.h"
#include "memorytimeline.h"
#include "pickle/jsondocument.h"
#include "pickle/unpickler.h"
#include "torchsnapshot.h"

#include <simdjson.h>

#include <array>

namespace peaklens {

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

// Trace text starts, after blank and comment lines, with one of its statements.
bool looksLikeTraceText(std::string_view prefix)
{
    static constexpr std::array<std::string_view, 14> starts = {
        "meta ", "layer ", "lane", "begin ", "end ", "alloc ", "free ", "reserve ", "unreserve ", "kernel ",
        "oom ", "snapshot ", "t=", "+"};
    if (prefix.find('\0') != std::string_view::npos)
        return false;
    std::size_t pos = 0;
    while (pos < prefix.size()) {
        auto newline = prefix.find('\n', pos);
        std::string_view line = prefix.substr(pos, newline == std::string_view::npos ? std::string_view::npos : newline - pos);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (!line.empty() && line.front() != '#' && line != "\r") {
            for (std::string_view start : starts) {
                if (line.starts_with(start))
                    return true;
            }
            return false;
        }
        if (newline == std::string_view::npos)
            break;
        pos = newline + 1;
    }
    return false;
}

// A JSON object with the snapshot's keys, or a list of segment dicts (the oldest form).
bool looksLikeSnapshotJson(std::string_view prefix)
{
    const auto start = prefix.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos)
        return false;
    if (prefix[start] == '{')
        return prefix.find("\"segments\"") != std::string_view::npos
               || prefix.find("\"device_traces\"") != std::string_view::npos;
    const auto next = prefix.find_first_not_of(" \t\r\n", start + 1);
    return prefix[start] == '[' && next != std::string_view::npos && prefix[next] == '{';
}

std::shared_ptr<const Trace> loadSnapshot(const std::string &path, bool json, const ImportProgress &progress)
{
    FileBytes bytes = readFileBytes(path, simdjson::SIMDJSON_PADDING, progress);
    pickle::Document document;
    if (json) {
        pickle::parseJsonDocument(bytes, document, path);
    } else {
        document.bytes = std::move(bytes);
        pickle::unpickle(document, path, progress);
    }
    return importTorchSnapshot(document, path, progress);
}

} // namespace

TraceFormat detectFormat(const std::string &path)
{
    requireReadableFile(path);
    const std::string prefix = readContentPrefix(path, kSniffBytes);
    if (TraceReader::recognizes(std::as_bytes(std::span(prefix.data(), prefix.size())))
        || prefix.starts_with("SQLite format 3"))
        return TraceFormat::Native;
    if (pickle::looksLikePickle(prefix))
        return TraceFormat::TorchSnapshot;
    if (looksLikeKinetoTrace(prefix))
        return TraceFormat::KinetoTrace;
    if (looksLikeSnapshotJson(prefix))
        return TraceFormat::TorchSnapshotJson;
    if (looksLikeMemoryTimeline(prefix))
        return TraceFormat::MemoryTimeline;
    if (looksLikeTraceText(prefix))
        return TraceFormat::TraceText;
    return TraceFormat::Unknown;
}

namespace {

std::shared_ptr<const Trace> readTrace(const std::string &path, const ImportProgress &progress)
{
    switch (detectFormat(path)) {
    case TraceFormat::Native:
        return TraceReader::read(path);
    case TraceFormat::TorchSnapshot:
        return loadSnapshot(path, false, progress);
    case TraceFormat::TorchSnapshotJson:
        return loadSnapshot(path, true, progress);
    case TraceFormat::KinetoTrace: {
        FileBytes bytes = readFileBytes(path, simdjson::SIMDJSON_PADDING, progress);
        return importKinetoTrace(bytes, path, progress);
    }
    case TraceFormat::MemoryTimeline:
        return importMemoryTimeline(readFileBytes(path, simdjson::SIMDJSON_PADDING, progress), path, progress);
    case TraceFormat::TraceText: {
        const FileBytes bytes = readFileBytes(path, 0, progress);
        try {
            return parseTraceText(bytes.view());
        } catch (const TraceTextError &error) {
            throw ImportError(path, std::string("is not valid PeakLens trace text: ") + error.what() + ".");
        }
    }
    case TraceFormat::Unknown:
        break;
    }
    throw ImportError(path, "is not a trace PeakLens can read: it is none of a PeakLens trace, PeakLens trace text, "
                            "a PyTorch memory snapshot (pickle or JSON), a Kineto trace or a memory-timeline export.");
}

} // namespace

std::shared_ptr<const Trace> loadTrace(const std::string &path, const ImportProgress &progress)
{
    progress.tick(0.0);
    try {
        return readTrace(path, progress);
    } catch (const FileError &) {
        throw;
    } catch (const ImportCancelled &) {
        throw;
    } catch (const Error &error) {
        // A limit the trace model holds to (too many layers, streams, stacks): name the file.
        throw ImportError(path, std::string("cannot be opened: ") + error.what());
    }
}

} // namespace peaklens
