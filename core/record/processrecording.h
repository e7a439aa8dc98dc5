// SPDX-License-Identifier: Apache-2.0
#pragma once
// One process's recording, whichever backend feeds it (plugins/cupti, plugins/torch): its
// *.peaklens named after the process (rank, pid) in PEAKLENS_OUT, the run's metadata from
// the environment `peaklens-cli record` sets, and a RecordingSession fed from a queue.
//
// Training threads only append to the queue (pushRange, popRange, add) and never wait for
// the file; a flusher thread drains it every half second, writes what is ready and
// commits at least every second (TraceWriter::commitIfDue): whoever follows the file sees
// each step within a second or so of its end. It wakes on no training event, so a process
// that forks (a data-loader worker) rarely finds it mid-write. At exit (finish) the rest is written, the
// helper's manifest beside the trace is applied and the file is finished. A write failure
// (a full disk) stops the recording with one line on stderr; the training goes on.
// Thread-safe.

#include "core/record/activityrecords.h"
#include "core/record/recordingsession.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace peaklens {
class TraceWriter;
}

namespace peaklens::record {

// "rank1-pid4242": which process of a (possibly distributed) run this is, from its global
// rank (torchrun's RANK, else Slurm's SLURM_PROCID), else its local one; the Python helper
// names its manifest the same way.
std::string processTag();

// Prints "peaklens: LINE" on stderr: what a recording says inside the user's process.
void say(const std::string &line);

class ProcessRecording
{
public:
    struct Backend
    {
        std::string source;      // the file's source.format: "cupti", "torch"
        std::string description; // "recorded by the CUPTI collector"
        // The clock of the backend's records, in nanoseconds.
        std::function<std::int64_t()> now;
        // Hands over what the backend still buffers (CUPTI's activity buffers), before a
        // batch is written; empty when records arrive as they happen.
        std::function<void()> flush;
        RecordingSession::Options options;
    };

    // Opens PEAKLENS_OUT/<processTag()>.peaklens and starts the flusher; throws
    // peaklens::Error when the file cannot be made.
    explicit ProcessRecording(Backend backend);
    ~ProcessRecording();
    ProcessRecording(const ProcessRecording &) = delete;
    ProcessRecording &operator=(const ProcessRecording &) = delete;

    // The calling thread's ranges, at the backend's time now.
    void pushRange(std::string_view name);
    void popRange();
    void pushRange(std::uint32_t thread, std::int64_t timeNs, std::string_view name);
    void popRange(std::uint32_t thread, std::int64_t timeNs);
    void add(ActivityRecord record);
    // Writes what is queued now, without waiting for the flusher.
    void flushNow();

    // Writes the rest, applies the manifest and finishes the file; later calls do nothing.
    void finish();

    const std::string &path() const { return m_path; }

    // The calling thread's id as the trace's ranges name it.
    static std::uint32_t currentThread();

private:
    struct RangeCall
    {
        std::uint32_t thread;
        std::int64_t timeNs;
        std::optional<std::string> pushed; // empty: a pop
    };

    void writeBatch(std::int64_t untilNs);
    void flushLoop();
    void applyManifest();
    void abandon(const std::exception &error);

    Backend m_backend;
    std::string m_path;
    std::string m_manifestPath;

    std::mutex m_queueMutex;
    std::vector<RangeCall> m_ranges;
    std::vector<ActivityRecord> m_records;

    std::mutex m_mutex; // guards the writer and the session
    std::unique_ptr<TraceWriter> m_writer;
    std::unique_ptr<RecordingSession> m_session;

    std::mutex m_flushMutex;
    std::condition_variable m_flushWake;
    bool m_stopping = false;
    std::thread m_flusher;
};

} // namespace peaklens::record
