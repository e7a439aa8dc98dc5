// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where PeakLens writes a file, trace or report: never onto one of its inputs, never onto a
// device or anything else that is not a regular file, never over a file that appeared while
// it worked unless replacing was asked for, and never half a file. The content goes to a
// temporary file beside the target, named for this process and output, which is synced and renamed
// into place only when complete; temporaries that killed processes left at the same place
// are removed on the next write there.

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

// A write past the file-size limit (ulimit -f) fails with EFBIG, for PeakLens to say so,
// instead of killing the process with SIGXFSZ mid-file. Every writer calls it first.
void ignoreFileSizeSignal();
// Why a write failed with `error` (errno), in the words every writer uses: the file-size
// limit and a full disk said as such.
std::string writeProblemText(int error);

class OutputFile
{
public:
    enum class Existing { Refuse, Replace };

    // Checks the target at once, before any slow work; throws FileError naming `path` when
    // it is one of `inputs`, is not a regular file, or exists and `existing` is Refuse.
    OutputFile(std::string path, Existing existing, const std::vector<std::string> &inputs = {});
    // Removes the temporary unless it was committed.
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    const std::string &path() const { return m_path; }
    // Where to write first; nothing is there yet.
    const std::string &temporary() const { return m_temporary; }

    // Makes the finished temporary durable and moves it into place; with Refuse, only if the
    // target still does not exist. Throws FileError naming the target, temporary removed.
    // A copy in the cache, made again whenever it is wanted, skips the syncs (Cached).
    enum class Durability { Synced, Cached };
    void commit(Durability durability = Durability::Synced);
    // The whole content at once: written to the temporary, then committed.
    void write(std::string_view contents);
    // Content too large to hold: `produce` writes it to the temporary, then it is committed.
    void write(const std::function<void(std::ostream &)> &produce);

    // The temporary's name for a target named `name`, written by process `pid` as its
    // `serial`th output: "NAME.partial-PID-SERIAL", the name shortened so the whole fits
    // the file system's 255 bytes.
    static std::string temporaryName(std::string_view name, long pid, unsigned serial);
    // Whether a file named `name` is such a temporary (or one of an earlier release's).
    static bool isTemporaryName(std::string_view name);

private:
    void removeStaleTemporaries() const;
    [[noreturn]] void fail(const std::string &problem);

    std::string m_path;
    Existing m_existing;
    std::string m_temporary;
    bool m_committed = false;
};

} // namespace peaklens
