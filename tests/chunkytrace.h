// SPDX-License-Identifier: Apache-2.0
#pragma once
// A native trace of many event chunks (as a long recording leaves, its summary's figures
// stored), for the tests that read a file while its pages arrive.

#include "core/document/summaryfigures.h"
#include "core/format/tracewriter.h"

#include <cstdint>
#include <string>

namespace peaklens::test {

inline void writeChunkyTrace(const std::string &path, int events)
{
    {
        TraceWriter writer(path);
        writer.writeLane(0, Lane{});
        // Blocks of varied sizes at varied addresses, each freed after the next is made.
        std::uint64_t mixed = 12345;
        std::int64_t lastBytes = 0;
        std::uint64_t lastAddr = 0;
        for (int i = 0; i < events; ++i) {
            const std::int64_t t = std::int64_t(i) * 100;
            if (i % 2 == 1) {
                writer.writeEvent(MemoryEvent{t, -lastBytes, lastAddr});
                continue;
            }
            mixed = mixed * 6364136223846793005ULL + 1442695040888963407ULL;
            lastBytes = static_cast<std::int64_t>(512 + (mixed >> 40) % 65536);
            lastAddr = 0x7f0000000000ULL + ((mixed >> 20) % (1ULL << 32)) * 512;
            writer.writeEvent(MemoryEvent{t, lastBytes, lastAddr});
        }
    }
    storeSummaryFigures(path);
}

} // namespace peaklens::test
