// SPDX-License-Identifier: Apache-2.0
// Benchmark of the native trace file: write, then read and analyse, N memory events of a
// synthetic but training-shaped trace (steps; per layer saved activations, temporaries,
// gradients). Prints one JSON line per phase.
//
//   bench_tracefile write N FILE       build the trace in memory, time TraceWriter::writeTrace
//   bench_tracefile write-v1 N FILE    the same trace in format 1 (fixed-width arrays), for comparison
//   bench_tracefile read FILE          time TraceReader::read + summarize (the file whole, as the app
//                                      opens one of up to LoadBudget::kDocumentEvents events)
//   bench_tracefile open FILE          time openAnalysed (what the app does: a bigger file as the
//                                      window around its peak; one of another format from its native
//                                      copy, written on the first open)
//   bench_tracefile open-at FILE SHARE time the window that begins SHARE (0 to 1) into the run, read
//                                      and analysed, as View > Read the Visible Time in Full Detail does
//   bench_tracefile summary FILE       time summarizeFile (what `summary` does: the stored figures, else
//                                      streamed when it can)
//   bench_tracefile summary-events FILE  the same from the events, the stored figures passed over
//   bench_tracefile rows FILE ROWS.db  copy the events into a one-row-per-event table (the floor)
//   bench_tracefile cancel FILE        how long a read takes to end once cancelled, at several points

#include "core/analysis/tracesummary.h"
#include "core/document/fileoverview.h"
#include "core/document/filesummary.h"
#include "core/document/summaryfigures.h"
#include "core/error.h"
#include "core/format/schema.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/trace/tracebuilder.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>

using namespace peaklens;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Times jittered from 20 ns to 3 us apart, sizes in 512-byte multiples that vary per
// block, and addresses reused as a caching allocator reuses them: compressible as real
// recordings are (tests/data/real), not more.
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
    std::mt19937_64 random(19);
    std::int64_t t = 0;
    std::uint64_t nextAddr = 0x7f0000000000;
    std::map<std::int64_t, std::vector<std::uint64_t>> freed; // size -> addresses free for reuse
    const auto allocate = [&](std::int64_t bytes) {
        auto &reusable = freed[bytes];
        if (!reusable.empty()) {
            const std::uint64_t addr = reusable.back();
            reusable.pop_back();
            return addr;
        }
        const std::uint64_t addr = nextAddr;
        nextAddr += static_cast<std::uint64_t>(bytes);
        return addr;
    };
    const auto event = [&](std::int64_t delta, std::uint64_t addr, int layer, Category category, Phase phase) {
        t += 20 + static_cast<std::int64_t>(random() % 3000);
        if (delta < 0)
            freed[-delta].push_back(addr);
        builder.addEvent(MemoryEvent{t, delta, addr, (addr >> 20) % 7 == 0 ? sideLane : lane,
                                     layers[static_cast<std::size_t>(layer)], stacks[static_cast<std::size_t>(layer)], category,
                                     phase});
    };
    const auto blockSize = [&](int shift) {
        return std::int64_t(512) * ((std::int64_t(1) << shift) + static_cast<std::int64_t>(random() % 4));
    };
    std::vector<std::pair<std::uint64_t, std::int64_t>> saved(kLayers * kSaved);
    for (std::int64_t step = 0; builder.current().events.size() < targetEvents; ++step) {
        const std::int64_t stepBegin = t;
        for (int l = 0; l < kLayers; ++l) {
            const std::int64_t begin = t;
            for (int s = 0; s < kSaved; ++s) {
                const std::int64_t bytes = blockSize(3 + s % 8);
                const std::uint64_t addr = allocate(bytes);
                saved[static_cast<std::size_t>(l * kSaved + s)] = {addr, bytes};
                event(bytes, addr, l, Category::Activation, Phase::Forward);
                const std::int64_t temporary = blockSize(7);
                const std::uint64_t temporaryAddr = allocate(temporary);
                event(temporary, temporaryAddr, l, Category::Temporary, Phase::Forward);
                event(-temporary, temporaryAddr, l, Category::Temporary, Phase::Forward);
            }
            builder.addRange(Range{layers[static_cast<std::size_t>(l)], Phase::Forward, step, begin, t, 0});
        }
        for (int l = kLayers - 1; l >= 0; --l) {
            const std::int64_t begin = t;
            for (int s = 0; s < kSaved; ++s) {
                const std::int64_t gradient = blockSize(5);
                const std::uint64_t gradientAddr = allocate(gradient);
                event(gradient, gradientAddr, l, Category::Gradient, Phase::Backward);
                const auto [addr, bytes] = saved[static_cast<std::size_t>(l * kSaved + s)];
                event(-bytes, addr, l, Category::Activation, Phase::Backward);
                event(-gradient, gradientAddr, l, Category::Gradient, Phase::Backward);
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
    // As convert and record leave a file: with its summary's figures, in a pass of their own.
    storeSummaryFigures(path);
    std::printf("{\"phase\": \"write\", \"events\": %zu, \"seconds\": %.3f, \"events_per_second\": %.0f}\n", trace->events.size(),
                seconds, static_cast<double>(trace->events.size()) / seconds);
    return 0;
}

// Format 1 stored each chunk as fixed-width arrays: the file TraceWriter writes, its
// events table replaced by that one.
int writeFormat1(std::size_t events, const std::string &path)
{
    const auto trace = syntheticTrace(events);
    const auto start = std::chrono::steady_clock::now();
    TraceWriter::writeTrace(*trace, path);
    SqliteDatabase db(path, SQLITE_OPEN_READWRITE);
    db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN; DROP TABLE events; DROP TABLE figures;");
    db.exec(schema::kCreateEventsV1);
    auto insert = db.prepare("INSERT INTO events VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    const MemoryEvents &all = trace->events;
    for (std::size_t begin = 0, chunk = 0; begin < all.size(); begin += schema::kEventsPerChunk, ++chunk) {
        const std::size_t end = std::min(all.size(), begin + schema::kEventsPerChunk);
        std::vector<std::int64_t> time, delta;
        std::vector<std::uint64_t> addr;
        std::vector<std::uint16_t> lane;
        std::vector<std::uint8_t> category, phase;
        std::vector<std::uint32_t> layer, stack;
        std::int64_t allocated = 0, freed = 0;
        for (std::size_t i = begin; i < end; ++i) {
            time.push_back(all.timeNs(i));
            delta.push_back(all.deltaBytes(i));
            (all.deltaBytes(i) > 0 ? allocated : freed) += std::abs(all.deltaBytes(i));
            addr.push_back(all.addr(i));
            lane.push_back(static_cast<std::uint16_t>(all.lane(i)));
            category.push_back(static_cast<std::uint8_t>(all.category(i)));
            phase.push_back(static_cast<std::uint8_t>(all.phase(i)));
            layer.push_back(all.layer(i) == kNoLayer ? schema::kFileNoLayer : all.layer(i));
            stack.push_back(all.stack(i));
        }
        insert.bind(1, static_cast<std::int64_t>(chunk)).bind(2, static_cast<std::int64_t>(end - begin));
        insert.bind(3, time.front()).bind(4, time.back()).bind(5, allocated).bind(6, freed);
        insert.bind(7, std::as_bytes(std::span(time))).bind(8, std::as_bytes(std::span(delta)));
        insert.bind(9, std::as_bytes(std::span(addr))).bind(10, std::as_bytes(std::span(lane)));
        insert.bind(11, std::as_bytes(std::span(category))).bind(12, std::as_bytes(std::span(phase)));
        insert.bind(13, std::as_bytes(std::span(layer))).bind(14, std::as_bytes(std::span(stack))).run();
    }
    db.exec("PRAGMA user_version = 1; COMMIT; VACUUM");
    const double seconds = secondsSince(start);
    std::printf("{\"phase\": \"write-v1\", \"events\": %zu, \"seconds\": %.3f}\n", all.size(), seconds);
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

// What the app and the CLI's plan do (openAnalysed): a file small enough whole, a bigger
// one as the window around its peak; events per second of the file's events.
int open(const std::string &path, std::optional<double> share = std::nullopt)
{
    // Where a share of the run lies: from the levels of the native file it is a window of.
    std::optional<std::int64_t> fromNs;
    if (share) {
        const OpenedTrace opened = openTraceWindow(path);
        const auto overview = opened.windowOf.empty() ? std::nullopt : readFileOverview(opened.windowOf);
        if (!overview)
            throw Error(path + " does not open as a window");
        const std::int64_t first = overview->high.front().timeNs, last = overview->high.back().timeNs;
        fromNs = first + static_cast<std::int64_t>(*share * static_cast<double>(last - first));
    }
    const auto start = std::chrono::steady_clock::now();
    OpenedTrace opened = openTraceWindow(path, {}, fromNs);
    const auto analysed = analyseTrace(path, std::move(opened.trace));
    const double seconds = secondsSince(start);
    const std::uint64_t fileEvents =
        opened.windowOf.empty() ? analysed->trace->events.size() : TraceReader::eventCount(opened.windowOf).value_or(0);
    std::printf("{\"phase\": \"%s\", \"events\": %llu, \"held\": %zu, \"seconds\": %.3f, \"events_per_second\": %.0f, "
                "\"peak_bytes\": %lld}\n",
                share ? "open-at" : "open", static_cast<unsigned long long>(fileEvents), analysed->trace->events.size(), seconds,
                static_cast<double>(fileEvents) / seconds,
                static_cast<long long>(analysed->summary.peak.devices.at(*analysed->summary.peak.primary).allocatedBytes));
    return 0;
}

int summary(const std::string &path, StoredFigures figures)
{
    const auto start = std::chrono::steady_clock::now();
    const FileSummary file = summarizeFile(path, {}, figures);
    const double seconds = secondsSince(start);
    const auto events = static_cast<double>(file.summary.eventCount);
    std::printf("{\"phase\": \"summary\", \"events\": %llu, \"streamed\": %s, \"stored\": %s, \"seconds\": %.3f, "
                "\"events_per_second\": %.0f, \"peak_bytes\": %lld}\n",
                static_cast<unsigned long long>(file.summary.eventCount), file.streamed ? "true" : "false",
                file.stored ? "true" : "false", seconds, events / seconds,
                static_cast<long long>(file.summary.peak.devices.at(*file.summary.peak.primary).allocatedBytes));
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
        Progress progress;
        progress.cancel = &cancelled;
        progress.report = [&fraction](double f) { fraction = f; };
        std::chrono::steady_clock::time_point ended;
        bool gaveUp = false;
        std::thread reader([&] {
            try {
                TraceReader::read(path, progress);
            } catch (const Cancelled &) {
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
        if (mode == "write-v1" && argc == 4)
            return writeFormat1(std::strtoull(argv[2], nullptr, 10), argv[3]);
        if (mode == "read" && argc == 3)
            return read(argv[2]);
        if (mode == "open" && argc == 3)
            return open(argv[2]);
        if (mode == "open-at" && argc == 4)
            return open(argv[2], std::strtod(argv[3], nullptr));
        if (mode == "summary" && argc == 3)
            return summary(argv[2], StoredFigures::Use);
        if (mode == "summary-events" && argc == 3)
            return summary(argv[2], StoredFigures::Ignore);
        if (mode == "rows" && argc == 4)
            return rows(argv[2], argv[3]);
        if (mode == "cancel" && argc == 3)
            return cancel(argv[2]);
    } catch (const std::exception &error) {
        std::fprintf(stderr, "bench_tracefile: %s\n", error.what());
        return 2;
    }
    std::fprintf(stderr, "usage: bench_tracefile write N FILE | write-v1 N FILE | read FILE | open FILE | open-at FILE SHARE | "
                         "summary FILE | summary-events FILE | "
                         "rows FILE "
                         "ROWS.db | cancel FILE\n");
    return 2;
}
