// SPDX-License-Identifier: Apache-2.0
#include "traceloader.h"

#include "remoteread.h"

#include "core/error.h"
#include "core/format/inputfile.h"
#include "core/format/readablefile.h"
#include "core/format/tracereader.h"
#include "core/trace/loadbudget.h"
#include "core/trace/tracetext.h"
#include "filebytes.h"
#include "kineto.h"
#include "memorytimeline.h"
#include "pickle/jsondocument.h"
#include "pickle/unpickler.h"
#include "torchsnapshot.h"

#include <simdjson.h>

#include <algorithm>
#include <array>

namespace peaklens {

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

// Trace text starts, after blank and comment lines, with one of its statements.
bool looksLikeTraceText(std::string_view prefix)
{
    static constexpr std::array<std::string_view, 14> starts = {"meta ",  "layer ",    "lane",     "begin ",     "end ",
                                                                "alloc ", "free ",     "reserve ", "unreserve ", "kernel ",
                                                                "oom ",   "snapshot ", "t=",       "+"};
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

} // namespace

TraceFormat formatOf(std::string_view prefix)
{
    if (TraceReader::recognizes(std::as_bytes(std::span(prefix.data(), prefix.size()))) || prefix.starts_with("SQLite format 3"))
        return TraceFormat::Native;
    if (pickle::looksLikePickle(prefix))
        return TraceFormat::TorchSnapshot;
    if (prefix.starts_with(kUtf8ByteOrderMark))
        prefix.remove_prefix(kUtf8ByteOrderMark.size());
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

TraceFormat detectFormat(const std::string &path)
{
    requireReadableFile(path);
    return formatOf(readContentPrefix(path, kSniffBytes));
}

namespace {

// One read of the input: a regular file where it lies, a stream from what InputFile read.
class Input
{
public:
    Input(const std::string &path, const Progress &progress)
        : m_file(InputFile::open(path, kSniffBytes))
        , m_budget(path, m_file.size())
        , m_progress(progress)
    {
        m_format = m_file.isStream()
                       ? formatOf(contentPrefix(std::string(m_file.streamed().begin(), m_file.streamed().end()), kSniffBytes))
                       : detectFormat(path);
        if (m_format == TraceFormat::Unknown)
            return; // not read on: a stream that holds no trace may never end
        m_file.readToEnd(LoadBudget::kMaxStreamBytes);
        m_budget.setInputBytes(m_file.size());
    }

    TraceFormat format() const { return m_format; }
    const std::string &path() const { return m_file.path(); }

    // The content, inflated when gzipped; the budget grows with what inflating revealed.
    FileBytes bytes(std::size_t padding)
    {
        FileBytes bytes = m_file.isStream() ? streamBytes(m_file.takeStreamed(), path(), padding, m_progress)
                                            : readFileBytes(path(), padding, m_progress);
        m_budget.setInputBytes(std::max<std::uint64_t>(m_file.size(), bytes.size()));
        bytes.dropByteOrderMark();
        return bytes;
    }

    std::shared_ptr<const Trace> native()
    {
        if (!m_file.isStream())
            return TraceReader::read(path(), m_progress);
        return TraceReader::readImage(path(), std::span(m_file.streamed().data(), m_file.streamed().size()), m_progress);
    }

private:
    InputFile m_file;
    LoadBudget::Scope m_budget;
    const Progress &m_progress;
    TraceFormat m_format = TraceFormat::Unknown;
};

std::shared_ptr<const Trace> readTrace(Input &input, const Progress &progress)
{
    const std::string &path = input.path();
    switch (input.format()) {
    case TraceFormat::Native:
        return input.native();
    case TraceFormat::TorchSnapshot:
        return streamTorchSnapshot(input.bytes(0), path, progress);
    case TraceFormat::TorchSnapshotJson: {
        FileBytes bytes = input.bytes(simdjson::SIMDJSON_PADDING);
        pickle::Document document;
        pickle::parseJsonDocument(bytes, document, path);
        return importTorchSnapshot(document, path, progress);
    }
    case TraceFormat::KinetoTrace: {
        FileBytes bytes = input.bytes(simdjson::SIMDJSON_PADDING);
        return importKinetoTrace(bytes, path, progress);
    }
    case TraceFormat::MemoryTimeline:
        return importMemoryTimeline(input.bytes(simdjson::SIMDJSON_PADDING), path, progress);
    case TraceFormat::TraceText: {
        const FileBytes bytes = input.bytes(0);
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

std::shared_ptr<const Trace> loadTrace(const std::string &path, const Progress &progress)
{
    if (parseRemotePath(path)) {
        return readWhereItLies(
            path, progress, [&](const std::string &copy, const Progress &reading) { return loadTrace(copy, reading); },
            [&](const std::shared_ptr<const Trace> &trace, const std::string &copy, const std::string &) {
                remoteread::nameSource(trace, copy, path);
            });
    }
    progress.tick(0.0);
    try {
        Input input(path, progress);
        return readTrace(input, progress);
    } catch (const FileError &) {
        throw;
    } catch (const Cancelled &) {
        throw;
    } catch (const Error &error) {
        // A limit the trace model holds to (too many layers, streams, stacks): name the file.
        throw ImportError(path, std::string("cannot be opened: ") + error.what());
    } catch (const std::bad_alloc &) {
        throw ImportError(path, "could not be loaded: the machine ran out of memory.");
    }
}

} // namespace peaklens
