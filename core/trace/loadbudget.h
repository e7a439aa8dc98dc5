// SPDX-License-Identifier: Apache-2.0
#pragma once
// How much memory and time loading one input may take, relative to the input's size: one
// policy for every importer and the native reader, so a small crafted file cannot make
// PeakLens build gigabytes or work for minutes. docs/formats.md ("Limits") documents it.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace peaklens {

class LoadBudget
{
public:
    // A load may hold kBaseBytes plus kBytesPerInputByte for every byte of its input (after
    // decompression): real traces need 1 to 4 bytes of memory per byte of file.
    static constexpr std::uint64_t kBaseBytes = std::uint64_t(512) << 20;
    static constexpr std::uint64_t kBytesPerInputByte = 16;

    // And it may take kBaseSeconds plus kSecondsPerMiB for every MiB of its input: real
    // traces load at 50 MiB/s and more.
    static constexpr std::int64_t kBaseSeconds = 30;
    static constexpr std::int64_t kSecondsPerMiB = 1;

    // What a pipe may deliver: it is held in memory whole.
    static constexpr std::uint64_t kMaxStreamBytes = std::uint64_t(8) << 30;

    // What a trace opened for analysis (openTrace: the app, and the CLI's plan, diff, report
    // and rerun) may hold in memory events, each costing kAnalysedBytesPerEvent once
    // analysed and drawn (its columns, the timeline's series by category and by layer, the
    // blocks index: 77 bytes measured on 10M events). A native file whose events would
    // cost more opens as the window of kDocumentEvents around its peak, the other tables
    // only where they overlap it; its running totals draw the whole, and `summary` reads it
    // all.
    static constexpr std::uint64_t kAnalysedBytesPerEvent = 80;
    static constexpr std::uint64_t kDocumentBytes = std::uint64_t(8) << 20;
    static constexpr std::size_t kDocumentEvents = kDocumentBytes / kAnalysedBytesPerEvent;

    static std::uint64_t limitFor(std::uint64_t inputBytes);
    static std::chrono::seconds timeLimitFor(std::uint64_t inputBytes);

    // While a Scope lives, what this thread builds is charged to a budget for `path`; scopes
    // nest (the innermost counts). Without one, nothing is limited: traces built in memory.
    class Scope
    {
    public:
        Scope(std::string path, std::uint64_t inputBytes);
        ~Scope();
        Scope(const Scope &) = delete;
        Scope &operator=(const Scope &) = delete;
        // Once the input's real size is known (a stream read, a gzip file inflated).
        void setInputBytes(std::uint64_t inputBytes);
        std::uint64_t usedBytes() const { return m_used; }

    private:
        friend class LoadBudget;
        std::string m_path;
        std::uint64_t m_inputBytes = 0;
        std::uint64_t m_limit = 0;
        std::uint64_t m_used = 0;
        std::chrono::steady_clock::time_point m_start;
        std::chrono::steady_clock::time_point m_deadline;
        Scope *m_outer = nullptr;
    };

    // Counts `bytes` more against the current scope; throws ImportError naming the file,
    // what was being built and the limit once the total passes it.
    // Checks the time as well.
    static void charge(std::uint64_t bytes, std::string_view what);

    // Counts more input for the current scope: the plain size of parts of the file that
    // are stored compressed.
    static void addInputBytes(std::uint64_t bytes);

    // Throws ImportError naming the file and the limit once the current scope's time is up.
    static void checkTime();
    // The same as a question, for callbacks that must not throw (SQLite's progress handler).
    static bool timeIsUp();
};

} // namespace peaklens
