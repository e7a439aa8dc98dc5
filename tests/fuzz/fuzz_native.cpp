// SPDX-License-Identifier: Apache-2.0
// Fuzzes the native file reader: each input is written to a file, opened, and summarized
// as the CLI does, a chunk at a time.
#include "core/document/filesummary.h"
#include "core/error.h"
#include "core/format/tracereader.h"

#include <cstdio>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const std::string path = "/tmp/peaklens-fuzz-" + std::to_string(::getpid()) + ".peaklens";
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
        return 0;
    std::fwrite(data, 1, size, file);
    std::fclose(file);
    try {
        peaklens::TraceReader::read(path);
    } catch (const peaklens::Error &) {
    }
    // The same file summarized a chunk at a time: the running totals, the streamed passes.
    try {
        peaklens::summarizeFile(path);
    } catch (const peaklens::Error &) {
    }
    // And opened as a window of one chunk around the peak the totals name.
    try {
        peaklens::readPeakWindow(path, 1, 0);
    } catch (const peaklens::Error &) {
    }
    return 0;
}
