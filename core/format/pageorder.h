// SPDX-License-Identifier: Apache-2.0
#pragma once
// The order in which a reader of a PeakLens trace wants its pages, for a copy that is read
// while it arrives (`peaklens-cli send`, ssh://HOST/PATH): the other end can read the small
// tables and the chunk index at once and each chunk as soon as its pages are in, instead of
// waiting for the whole file.

#include <cstdint>
#include <vector>

namespace peaklens {

struct ByteRun
{
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

// Every byte of the file open as `fd`, `size` bytes long, exactly once, in runs of at most
// kMaxRunBytes. For an SQLite database: its first kHeadBytes (the header, and what format
// detection reads), then each b-tree (table or index) whole, its own pages before the
// overflow pages of its rows, the smallest trees first (the tables a reader reads before
// the events), then the pages no tree reaches, in file order. For any other file, or where
// the file cannot be read, in file order. The order is only an order: a damaged page sends
// its neighbours later, never loses a byte.
class PageOrder
{
public:
    static constexpr std::uint64_t kHeadBytes = 64 * 1024;
    static constexpr std::uint64_t kMaxRunBytes = 1 << 20;

    static std::vector<ByteRun> of(int fd, std::uint64_t size);
};

} // namespace peaklens
