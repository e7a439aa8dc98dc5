// Benchmark of the native trace file: write, then read and analyse, N memory events of a
// synthetic but training-shaped trace (steps; per layer saved activations, temporaries,
// gradients). Prints one JSON line per phase.
//
//   bench_tracefile write N FILE       build the trace in memory, time TraceWriter::writeTrace
//   bench_tracefile read FILE          time TraceReader::read + summarize (what `summary` does)
//   bench_tracefile rows FILE ROWS.db  copy the events into a one-row-per-event table (the floor)
//   bench_tracefile cancel FILE        how long a read takes to end once cancelled, at several points

#include "core/analysis/tracesummary.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/trace/tracebuilder.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace peaklens;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::shared_ptr<const Trace> syntheticTrace(std::size_t targetEvents)
{
    constexpr int kLayers = 16;
    constexpr int kSaved = 8;
    TraceBuilder builder;
    builder.setMeta("source.format", "bench");
    const std::uint32_t lane = builder.lane(Lane{});
    const std::uint32_t sideLane = builder.lane(Lane{Device{}, 2});
    std::vector<std::uint32_t> layers, stacks;
    for (int l = 0; l < kLayers; ++l) {
        layers.push_back(builder.layer("model.blocks." + std::to_string(l)));
        stacks.push_back(builder.stacks().internStack(
            {Frame{"main", "train.py", 10}, Frame{"forward", "model.py", 20 + l}, Frame{"linear", "functional.py", 1848}}));
    }
    builder.reserveEvents(targetEvents);
    std::int64_t t = 0;
    std::uint64_t nextAddr = 0x7f0000000000;
    std::vector<std::uint64_t> saved(kLayers * kSaved);
    const auto event = [&](std::int64_t delta, std::uint64_t addr, int layer, Category category, Phase phase) {
        builder.addEvent(MemoryEvent{t += 100, delta, addr, (addr >> 20) % 7 == 0 ? sideLane : lane,
                                     layers[static_cast<std::size_t>(layer)], stacks[static_cast<std::size_t>(layer)],
                                     category, phase});
    };
    for (std::int64_t step = 0; builder.current().events.size() < targetEvents; ++step) {
        const std::int64_t stepBegin = t;
        for (int l = 0; l < kLayers; ++l) {
            const std::int64_t begin = t;
            for (int s = 0; s < kSaved; ++s) {
                saved[static_cast<std::size_t>(l * kSaved + s)] = nextAddr;
                event(1 << (12 + s % 8), nextAddr, l, Category::Activation, Phase::Forward);
                nextAddr += 1 << 20;
                event(1 << 16, 0x10000000 + static_cast<std::uint64_t>(s), l, Category::Temporary, Phase::Forward);
                event(-(1 << 16), 0x10000000 + static_cast<std::uint64_t>(s), l, Category::Temporary, Phase::Forward);
            }
            builder.addRange(Range{layers[static_cast<std::size_t>(l)], Phase::Forward, step, begin, t, 0});
        }
        for (int l = kLayers - 1; l >= 0; --l) {
            const std::int64_t begin = t;
            for (int s = 0; s < kSaved; ++s) {
                event(1 << 14, 0x20000000 + static_cast<std::uint64_t>(s), l, Category::Gradient, Phase::Backward);
                event(-(1 << (12 + s % 8)), saved[static_cast<std::size_t>(l * kSaved + s)], l, Category::Activation,
                      Phase::Backward);
                event(-(1 << 14), 0x20000000 + static_cast<std::uint64_t>(s), l, Category::Gradient, Phase::Backward);
            }
            builder.addRange(Range{layers[static_cast<std::size_t>(l)], Phase::Backward, step, begin, t, 0});
        }
        builder.addStep(Step{step, stepBegin, t + 1});
    }
    return builder.finish();
}

int write(std::size_t events, const std::string &path)
{
    const auto trace = syntheticTrace(events);
    const auto start = std::chrono::steady_clock::now();
    TraceWriter::writeTrace(*trace, path);
    const double seconds = secondsSince(start);
    std::printf("{\"phase\": \"write\", \"events\": %zu, \"seconds\": %.3f, \"events_per_second\": %.0f}\n",
                trace->events.size(), seconds, static_cast<double>(trace->events.size()) / seconds);
    return 0;
}

int read(const std::string &path)
{
    const auto start = std::chrono::steady_clock::now();
    const auto trace = TraceReader::read(path);
    const double readSeconds = secondsSince(start);
    const TraceSummary summary = summarize(*trace);
    const double totalSeconds = secondsSince(start);
    const auto events = static_cast<double>(trace->events.size());
    std::printf("{\"phase\": \"read+analyse\", \"events\": %zu, \"read_seconds\": %.3f, \"analyse_seconds\": %.3f, "
                "\"events_per_second\": %.0f, \"peak_bytes\": %lld}\n",
                trace->events.size(), readSeconds, totalSeconds - readSeconds, events / totalSeconds,
                static_cast<long long>(summary.peak.devices.at(*summary.peak.primary).allocatedBytes));
    return 0;
}

int rows(const std::string &path, const std::string &rowsPath)
{
    const auto trace = TraceReader::read(path);
    SqliteDatabase db(rowsPath, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
            "CREATE TABLE events(t_ns INTEGER, delta_bytes INTEGER, addr INTEGER, lane INTEGER, category INTEGER,"
            " phase INTEGER, layer INTEGER, stack INTEGER)");
    auto insert = db.prepare("INSERT INTO events VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    const MemoryEvents &events = trace->events;
    for (std::size_t i = 0; i < events.size(); ++i) {
        insert.bind(1, events.timeNs(i)).bind(2, events.deltaBytes(i)).bind(3, static_cast<std::int64_t>(events.addr(i)));
        insert.bind(4, events.lane(i)).bind(5, static_cast<std::int64_t>(events.category(i)));
        insert.bind(6, static_cast<std::int64_t>(events.phase(i))).bind(7, events.layer(i)).bind(8, events.stack(i));
        insert.run();
    }
    db.exec("COMMIT");
    return 0;
}

// The app's Cancel button during a read: the flag is set after `delay`; what counts is
// the time from then until the read gives up.
int cancel(const std::string &path)
{
    for (const int delayMs : {1, 20, 100, 300, 500}) {
        std::atomic<bool> cancelled = false;
        std::atomic<double> fraction = 0;
        ImportProgress progress;
        progress.cancel = &cancelled;
        progress.report = [&fraction](double f) { fraction = f; };
        std::chrono::steady_clock::time_point ended;
        bool gaveUp = false;
        std::thread reader([&] {
            try {
                TraceReader::read(path, progress);
            } catch (const ImportCancelled &) {
                gaveUp = true;
            }
            ended = std::chrono::steady_clock::now();
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
        const auto cancelledAt = std::chrono::steady_clock::now();
        const double at = fraction;
        cancelled = true;
        reader.join();
        std::printf("{\"phase\": \"cancel\", \"after_ms\": %d, \"progress\": %.2f, \"ended\": \"%s\", "
                    "\"latency_ms\": %.1f}\n",
                    delayMs, at, gaveUp ? "cancelled" : "finished first",
                    std::chrono::duration<double, std::milli>(ended - cancelledAt).count());
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        if (mode == "write" && argc == 4)
            return write(std::strtoull(argv[2], nullptr, 10), argv[3]);
        if (mode == "read" && argc == 3)
            return read(argv[2]);
        if (mode == "rows" && argc == 4)
            return rows(argv[2], argv[3]);
        if (mode == "cancel" && argc == 3)
            return cancel(argv[2]);
    } catch (const std::exception &error) {
        std::fprintf(stderr, "bench_tracefile: %s\n", error.what());
        return 2;
    }
    std::fprintf(stderr, "usage: bench_tracefile write N FILE | read FILE | rows FILE ROWS.db | cancel FILE\n");
    return 2;
}
