#include "traceloader.h"

#include "core/error.h"
#include "core/format/readablefile.h"
#include "core/format/tracereader.h"
#include "core/trace/tracetext.h"

#include <array>
#include <fstream>
#include <sstream>

namespace peaklens {

namespace {

constexpr std::size_t kSniffBytes = 4096;

std::string readPrefix(const std::string &path, std::size_t bytes)
{
    std::ifstream file(path, std::ios::binary);
    std::string prefix(bytes, '\0');
    file.read(prefix.data(), static_cast<std::streamsize>(bytes));
    prefix.resize(static_cast<std::size_t>(file.gcount()));
    return prefix;
}

// Trace text starts, after blank and comment lines, with one of its statements.
bool looksLikeTraceText(std::string_view prefix)
{
    static constexpr std::array<std::string_view, 14> starts = {
        "meta ", "layer ", "lane", "begin ", "end ", "alloc ", "free ", "reserve ", "unreserve ", "kernel ", "oom ", "snapshot ", "t=", "+"};
    for (char c : prefix) {
        if (c == '\0')
            return false;
    }
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

} // namespace

TraceFormat detectFormat(const std::string &path)
{
    const std::string prefix = readPrefix(path, kSniffBytes);
    if (TraceReader::recognizes(std::as_bytes(std::span(prefix.data(), prefix.size()))))
        return TraceFormat::Native;
    if (looksLikeTraceText(prefix))
        return TraceFormat::TraceText;
    return TraceFormat::Unknown;
}

std::shared_ptr<const Trace> loadTrace(const std::string &path)
{
    requireReadableFile(path);

    switch (detectFormat(path)) {
    case TraceFormat::Native:
        return TraceReader::read(path);
    case TraceFormat::TraceText: {
        std::ifstream file(path, std::ios::binary);
        std::ostringstream text;
        text << file.rdbuf();
        try {
            return parseTraceText(text.str());
        } catch (const TraceTextError &error) {
            throw ImportError(path, std::string("is not valid PeakLens trace text: ") + error.what() + ".");
        }
    }
    case TraceFormat::Unknown:
        break;
    }
    // The native reader explains best what is wrong with a file that is almost a trace.
    const std::string prefix = readPrefix(path, 16);
    if (prefix.starts_with("SQLite format 3"))
        return TraceReader::read(path);
    throw ImportError(path, "is not a trace PeakLens can read: it is neither a PeakLens trace (*.peaklens) "
                            "nor PeakLens trace text.");
}

} // namespace peaklens
