// SPDX-License-Identifier: Apache-2.0
// Writes a trace again the way a collector writes a run while it trains, for tests that
// follow a file being written: ids first, then events in time order with each range and
// step written when it ends, a commit every N events and a pause after each.
//
//   peaklens-test-livewriter IN OUT.peaklens [--commit-every N] [--pause-ms MS] [--die-after K]
//
// Prints "committed N" after every commit. --die-after K ends the process without
// finishing the file after K commits, as a killed run would.

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>

using namespace peaklens;

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s IN OUT.peaklens [--commit-every N] [--pause-ms MS] [--die-after K]\n", argv[0]);
        return 2;
    }
    std::size_t commitEvery = 1000;
    int pauseMs = 0;
    long dieAfter = -1;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--commit-every"))
            commitEvery = std::max(1ul, std::strtoul(argv[i + 1], nullptr, 10));
        else if (!std::strcmp(argv[i], "--pause-ms"))
            pauseMs = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--die-after"))
            dieAfter = std::atol(argv[i + 1]);
    }
    try {
        const auto trace = loadTrace(argv[1]);
        TraceWriter writer(argv[2]);
        for (const auto &[key, value] : trace->meta)
            writer.writeMeta(key, value);
        for (std::uint32_t i = 0; i < trace->lanes.size(); ++i)
            writer.writeLane(i, trace->lanes[i]);
        for (std::uint32_t i = 0; i < trace->layers.size(); ++i)
            writer.writeLayer(i, trace->layers[i]);
        for (std::uint32_t i = 0; i < trace->stacks.frames().size(); ++i)
            writer.writeFrame(i, trace->stacks.frames()[i]);
        for (std::uint32_t i = 1; i < trace->stacks.nodes().size(); ++i)
            writer.writeStack(i, trace->stacks.nodes()[i]);
        for (std::uint32_t i = 0; i < trace->kernelNames.size(); ++i)
            writer.writeKernelName(i, trace->kernelNames[i]);
        for (std::uint32_t i = 0; i < trace->stageNames.size(); ++i)
            writer.writeStageName(i, trace->stageNames[i]);

        // Everything but the events in the order a recorder learns of it: when it ends.
        struct Later
        {
            std::int64_t atNs;
            std::function<void()> write;
        };
        std::vector<Later> later;
        for (const Range &range : trace->ranges)
            later.push_back({range.endNs, [&writer, range] { writer.writeRange(range); }});
        for (const Step &step : trace->steps)
            later.push_back({step.endNs, [&writer, step] { writer.writeStep(step); }});
        for (const Kernel &kernel : trace->kernels)
            later.push_back({kernel.endNs, [&writer, kernel] { writer.writeKernel(kernel); }});
        for (const ReservedEvent &event : trace->reserved)
            later.push_back({event.timeNs, [&writer, event] { writer.writeReserved(event); }});
        for (const Marker &marker : trace->markers)
            later.push_back({marker.timeNs, [&writer, marker] { writer.writeMarker(marker); }});
        std::stable_sort(later.begin(), later.end(), [](const Later &a, const Later &b) { return a.atNs < b.atNs; });

        long commits = 0;
        const auto commit = [&] {
            writer.commit();
            std::printf("committed %llu\n", static_cast<unsigned long long>(writer.committedEvents()));
            std::fflush(stdout);
            if (++commits == dieAfter)
                _exit(9);
            if (pauseMs > 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(pauseMs));
        };
        std::size_t next = 0;
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            for (; next < later.size() && later[next].atNs < trace->events.timeNs(i); ++next)
                later[next].write();
            writer.writeEvent(trace->events.at(i));
            if ((i + 1) % commitEvery == 0)
                commit();
        }
        for (; next < later.size(); ++next)
            later[next].write();
        commit();
        writer.finish();
    } catch (const Error &error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 2;
    }
    return 0;
}
