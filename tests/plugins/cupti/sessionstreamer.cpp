// SPDX-License-Identifier: Apache-2.0
// Records a synthetic training run the way the collector does, forever: in step i the
// main thread opens fwd:layer, allocates and frees one block, and closes it; records are
// handed over in batches. After every commit it prints "committed N" so a test can kill
// it with SIGKILL and check what survived.

#include "core/record/recordingsession.h"

#include "core/error.h"

#include <chrono>
#include <cstdio>
#include <thread>

using namespace peaklens;

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT.peaklens\n", argv[0]);
        return 2;
    }
    try {
        TraceWriter writer(argv[1]);
        record::RecordingSession session(writer, {});
        std::uint64_t reported = 0;
        std::uint32_t correlation = 0;
        for (std::int64_t step = 0;; ++step) {
            const std::int64_t t = step * 1000;
            session.pushRange(1, t, "step:" + std::to_string(step));
            session.pushRange(1, t + 100, "fwd:layer");
            for (int k = 0; k < 2; ++k) {
                const std::int64_t at = t + 200 + k * 100;
                session.add(record::MemoryRecord{k == 0, std::uint64_t(step) * 64, 4096, at, 0, 0, ++correlation, false});
                session.add(record::ApiRecord{correlation, 1, at - 1, at + 1});
            }
            session.popRange(1, t + 500);
            session.popRange(1, t + 900);
            if (step % 50 == 49) {
                session.endBatch();
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            if (writer.committedEvents() != reported) {
                reported = writer.committedEvents();
                std::printf("committed %llu\n", static_cast<unsigned long long>(reported));
                std::fflush(stdout);
            }
        }
    } catch (const Error &error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 2;
    }
}
