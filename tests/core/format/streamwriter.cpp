// SPDX-License-Identifier: Apache-2.0
// Streams memory events into a new trace the way a collector does, forever: event i is
// an allocation of i+1 bytes at address i, at time i. After every commit it prints
// "committed N" so a test can kill it with SIGKILL and check what survived.

#include "core/error.h"
#include "core/format/tracewriter.h"

#include <chrono>
#include <cstdio>
#include <thread>

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT.peaklens\n", argv[0]);
        return 2;
    }
    try {
        peaklens::TraceWriter writer(argv[1]);
        writer.writeMeta("source.format", "stream-test");
        writer.writeLane(0, peaklens::Lane{});
        std::uint64_t reported = 0;
        for (std::uint64_t i = 0;; ++i) {
            writer.writeEvent(peaklens::MemoryEvent{static_cast<std::int64_t>(i), static_cast<std::int64_t>(i + 1), i});
            if (writer.committedEvents() != reported) {
                reported = writer.committedEvents();
                std::printf("committed %llu\n", static_cast<unsigned long long>(reported));
                std::fflush(stdout);
            }
            if (i % 100 == 99)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    } catch (const peaklens::Error &error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 2;
    }
}
