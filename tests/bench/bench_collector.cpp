// SPDX-License-Identifier: Apache-2.0
// What the collector costs on the CPU per allocation, against writing the same events
// straight into a streaming trace (the floor any collector pays):
//   bench_collector [EVENTS]
// A synthetic run: 50 layers, forward on one thread and backward on another, every
// allocation freed in the backward. Each allocation arrives as hand-built CUPTI records
// (CUpti_ActivityMemory4 + CUpti_ActivityAPI), decoded, attributed and written; ranges come
// as NVTX push/pop calls. Batches of 4096 records stand for CUPTI's buffers.

#include "activitydecoder.h"
#include "core/record/recordingsession.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace peaklens;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kLayers = 50;
constexpr std::uint32_t kMain = 1;
constexpr std::uint32_t kAutograd = 2;

struct Synthetic
{
    std::vector<CUpti_ActivityMemory4> memory;
    std::vector<CUpti_ActivityAPI> api;
    struct RangeCall
    {
        std::uint32_t thread;
        std::int64_t t;
        std::string name; // empty: pop
    };
    std::vector<RangeCall> ranges;
    std::vector<std::size_t> rangesBefore; // ranges[..rangesBefore[i]] come before memory[i]
};

Synthetic makeRun(std::size_t events)
{
    Synthetic run;
    const std::size_t perLayer = std::max<std::size_t>(1, events / 2 / kLayers);
    std::int64_t t = 0;
    std::uint32_t correlation = 0;
    auto addMemory = [&](bool alloc, std::uint64_t address) {
        CUpti_ActivityMemory4 memory;
        std::memset(static_cast<void *>(&memory), 0, sizeof(memory));
        memory.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        memory.memoryOperationType =
            alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        memory.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        memory.address = address;
        memory.bytes = 1 << 20;
        memory.timestamp = static_cast<std::uint64_t>(t);
        memory.correlationId = ++correlation;
        CUpti_ActivityAPI api;
        std::memset(static_cast<void *>(&api), 0, sizeof(api));
        api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        api.correlationId = correlation;
        api.threadId = alloc ? kMain : kAutograd;
        api.start = static_cast<std::uint64_t>(t - 1);
        api.end = static_cast<std::uint64_t>(t + 1);
        run.memory.push_back(memory);
        run.api.push_back(api);
        run.rangesBefore.push_back(run.ranges.size());
        t += 10;
    };
    for (int layer = 0; layer < kLayers; ++layer) {
        run.ranges.push_back({kMain, t++, "fwd:blocks." + std::to_string(layer)});
        for (std::size_t i = 0; i < perLayer; ++i)
            addMemory(true, (std::uint64_t(layer) << 32) | i << 8);
        run.ranges.push_back({kMain, t++, {}});
    }
    for (int layer = kLayers - 1; layer >= 0; --layer) {
        run.ranges.push_back({kAutograd, t++, "bwd:blocks." + std::to_string(layer)});
        for (std::size_t i = 0; i < perLayer; ++i)
            addMemory(false, (std::uint64_t(layer) << 32) | i << 8);
        run.ranges.push_back({kAutograd, t++, {}});
    }
    run.rangesBefore.push_back(run.ranges.size());
    return run;
}

double collectorSeconds(const Synthetic &run, const std::string &path)
{
    const auto start = Clock::now();
    TraceWriter writer(path);
    record::RecordingSession session(writer, {});
    std::size_t nextRange = 0;
    auto playRanges = [&](std::size_t until) {
        for (; nextRange < until; ++nextRange) {
            const auto &call = run.ranges[nextRange];
            if (call.name.empty())
                session.popRange(call.thread, call.t);
            else
                session.pushRange(call.thread, call.t, call.name);
        }
    };
    for (std::size_t i = 0; i < run.memory.size(); ++i) {
        playRanges(run.rangesBefore[i]);
        session.add(*cupti::decodeActivity(reinterpret_cast<const CUpti_Activity &>(run.memory[i])));
        session.add(*cupti::decodeActivity(reinterpret_cast<const CUpti_Activity &>(run.api[i])));
        if (i % 4096 == 4095)
            session.endBatch();
    }
    playRanges(run.ranges.size());
    session.endBatch();
    session.finish();
    writer.finish();
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double plainWriterSeconds(const Synthetic &run, const std::string &path)
{
    const auto start = Clock::now();
    TraceWriter writer(path);
    writer.writeLane(0, Lane{});
    for (const CUpti_ActivityMemory4 &memory : run.memory) {
        const auto bytes = static_cast<std::int64_t>(memory.bytes);
        writer.writeEvent(MemoryEvent{
            static_cast<std::int64_t>(memory.timestamp),
            memory.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ? bytes : -bytes, memory.address});
    }
    writer.finish();
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv)
{
    const std::size_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
    const Synthetic run = makeRun(events);
    const auto directory = std::filesystem::temp_directory_path() / ("bench-collector-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    std::printf("%zu memory events, %zu ranges\n", run.memory.size(), run.ranges.size() / 2);
    for (int round = 0; round < 3; ++round) {
        const std::string suffix = std::to_string(round) + ".peaklens";
        const double plain = plainWriterSeconds(run, (directory / ("plain" + suffix)).string());
        const double collector = collectorSeconds(run, (directory / ("collector" + suffix)).string());
        std::printf("round %d: plain writer %.0f ns/event, collector (decode + attribute + write) %.0f ns/event, x%.2f\n", round,
                    plain * 1e9 / double(run.memory.size()), collector * 1e9 / double(run.memory.size()), collector / plain);
    }
    std::filesystem::remove_all(directory);
}
