// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace on another machine (ssh://HOST/PATH) is read as the file it names: copied into
// the user's cache (RemoteFetch) and read where the copy lies, as any local file is, a big
// one as a window around its peak; a PeakLens trace while its pages arrive. What is said
// of it names the remote path, never the copy: the errors, and the trace's source.path.

#include "core/error.h"
#include "core/format/remotefile.h"
#include "core/progress.h"
#include "core/trace/metadata.h"
#include "core/trace/trace.h"

#include <memory>
#include <string>

namespace peaklens {

namespace remoteread {

// A trace just read from `copy`, owned by the caller alone: where it says it came from.
inline void nameSource(const std::shared_ptr<const Trace> &trace, const std::string &copy, const std::string &path)
{
    if (trace && trace->metaValue(metakey::SourcePath) == copy)
        std::const_pointer_cast<Trace>(trace)->meta[std::string(metakey::SourcePath)] = path;
}

} // namespace remoteread

// Copy::Fresh fetches the whole file and keeps it in the cache. With Copy::Reuse, the copy
// this process made of the same ssh:// path before, if there is one, is read as it is:
// another window of the same document reads the very file its first one did. With
// Copy::WhatIsRead, a PeakLens trace is fetched only as far as the reading goes (a summary
// from the figures stored in it), and nothing is kept.
enum class Copy { Fresh, Reuse, WhatIsRead };

// `read(path, progress)` for a local path; for ssh://HOST/PATH, `read(copy, part)` on its
// local copy (RemoteFetch), the copy's path in a FileError thrown put back to `path`, and
// `rename(result, copy, kept)` given the result to say `path` where it said `copy`, and
// `kept` where it means the copy's file (remoteread::nameSource on each trace it holds).
// A PeakLens trace is read while it arrives, the copy taking the first 90 % of
// `progress`; anything else once it is whole, in the last 10 %. An error of the copy (the
// connection broke, cancelled) is the one said, whatever the reading made of it.
template<typename Read, typename Rename>
auto readWhereItLies(const std::string &path, const Progress &progress, Read read, Rename rename, Copy copying = Copy::Fresh)
    -> decltype(read(path, progress))
{
    const auto remote = parseRemotePath(path);
    if (!remote)
        return read(path, progress);
    const auto readCopy = [&](const std::string &copy, const Progress &part, auto &&kept) {
        try {
            auto result = read(copy, part);
            rename(result, copy, kept());
            return result;
        } catch (const FileError &error) {
            if (error.path() != copy)
                throw;
            throw ImportError(path, error.problem());
        }
    };
    const Progress reading = progress.part(0.9, 1.0);
    if (copying == Copy::Reuse) {
        if (const auto made = RemoteFetch::madeBefore(path))
            return readCopy(*made, reading, [&]() -> const std::string & { return *made; });
    }
    RemoteFetch fetch(path, *remote, progress.part(0, 0.9));
    if (!fetch.readableEarly()) {
        const std::string copy = fetch.finish();
        return readCopy(copy, reading, [&]() -> const std::string & { return copy; });
    }
    // The copy reports its progress from its own thread meanwhile; the reading, none.
    const Progress quiet{nullptr, progress.cancel};
    try {
        if (copying == Copy::WhatIsRead) // the rest is not fetched: the copy goes with `fetch`
            return readCopy(fetch.arriving(), quiet, [&]() -> const std::string & { return fetch.arriving(); });
        return readCopy(fetch.arriving(), quiet, [&] { return fetch.finish(); });
    } catch (...) {
        if (fetch.stoppedShort())
            fetch.finish(); // throws what stopped it: the reading failed for that
        throw;
    }
}

} // namespace peaklens
