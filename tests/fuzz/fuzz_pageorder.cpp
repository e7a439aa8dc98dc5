// SPDX-License-Identifier: Apache-2.0
// Fuzzes the order `send` gives a file's pages (PageOrder): whatever the bytes, a damaged
// SQLite file above all, the runs hold every byte exactly once.
#include "core/format/pageorder.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const int file = ::memfd_create("peaklens-fuzz-pageorder", MFD_CLOEXEC);
    if (file < 0 || ::ftruncate(file, 0) != 0 || ::pwrite(file, data, size, 0) != static_cast<ssize_t>(size))
        return 0;
    std::vector<peaklens::ByteRun> runs = peaklens::PageOrder::of(file, size);
    std::sort(runs.begin(), runs.end(), [](const auto &a, const auto &b) { return a.offset < b.offset; });
    std::uint64_t next = 0;
    for (const peaklens::ByteRun &run : runs) {
        if (run.offset != next || run.length == 0 || run.length > peaklens::PageOrder::kMaxRunBytes)
            std::abort();
        next += run.length;
    }
    if (next != size)
        std::abort();
    return 0;
}
