// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace whose writer was killed keeps its newest pages in a write-ahead log (`-wal`) or
// its last transaction's undo in a hot journal (`-journal`) beside it. SQLite must write to
// read such a file (rebuild the log's index, roll the journal back), and PeakLens never
// writes beside an input: it copies the file and its log into a private folder and reads
// the copy there. The folder goes when the copy does.

#include <string>

namespace peaklens {

class PrivateCopy
{
public:
    // True when `path` has a log or journal beside it that SQLite would have to act on.
    static bool isNeededFor(const std::string &path);

    // Copies `path` and its log or journal; throws ImportError naming `path` when it cannot.
    explicit PrivateCopy(const std::string &path);
    ~PrivateCopy();
    PrivateCopy(const PrivateCopy &) = delete;
    PrivateCopy &operator=(const PrivateCopy &) = delete;

    const std::string &path() const { return m_copy; }

private:
    std::string m_folder;
    std::string m_copy;
};

} // namespace peaklens
