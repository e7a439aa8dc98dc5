// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace on another machine (ssh://HOST/PATH) is read as the file it names: copied into
// the user's cache first (fetchRemoteFile), then read where the copy lies, as any local
// file is, a big one as a window around its peak. What is said of it names the remote
// path, never the copy: the errors, and the trace's source.path.

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

// `read(path)` for a local path; for ssh://HOST/PATH, `read(copy)` on its local copy
// (fetchRemoteFile, with `copy`), the copy's path in a FileError thrown put back to `path`,
// and `rename(result, copy)` given the result to do the same (remoteread::nameSource on each
// trace it holds). The copy takes the first 90 % of `progress` when the host says how big
// the file is.
template<typename Read, typename Rename>
auto readWhereItLies(const std::string &path, const Progress &progress, Read read, Rename rename, Copy copying = Copy::Fresh)
    -> decltype(read(path))
{
    const auto remote = parseRemotePath(path);
    if (!remote)
        return read(path);
    const std::string copy = fetchRemoteFile(path, *remote, progress.part(0, 0.9), copying);
    try {
        auto result = read(copy);
        rename(result, copy);
        return result;
    } catch (const FileError &error) {
        if (error.path() != copy)
            throw;
        throw ImportError(path, error.problem());
    }
}

} // namespace peaklens
