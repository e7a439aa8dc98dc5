// SPDX-License-Identifier: Apache-2.0
// Fuzzes the native reader with traces edited through SQLite: each input is a program of
// edits (sqlmutator.h) to the sample trace, and the edited database is read from memory.
// The reader may only refuse it with an ImportError naming the file; what it accepts must
// also save and read back, as `peaklens-cli convert` does (with its summary's figures), and
// follow as `watch` does.
#include "scratchfolder.h"
#include "sourcefile.h"
#include "sqlmutator.h"

#include "core/analysis/liveanalysis.h"
#include "core/document/filesummary.h"
#include "core/document/summaryfigures.h"
#include "core/error.h"
#include "core/format/tracefollower.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/report/summaryjson.h"
#include "core/trace/loadbudget.h"

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

namespace {

const std::string &scratchFile()
{
    static const peaklens::fuzz::ScratchFolder folder({});
    static const std::string path = folder.path() / "rewritten.peaklens";
    return path;
}

[[noreturn]] void fail(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_native_sql: %s: %s\n", what, detail.c_str());
    __builtin_trap();
}

void checkRewritable(const peaklens::Trace &trace)
{
    std::shared_ptr<const peaklens::Trace> again;
    try {
        peaklens::TraceWriter::writeTrace(trace, scratchFile());
        again = peaklens::TraceReader::read(scratchFile());
    } catch (const peaklens::Error &error) {
        fail("a trace the reader accepted did not save and read back", error.what());
    }
    if (again->events.size() != trace.events.size() || again->layers.size() != trace.layers.size()
        || again->ranges.size() != trace.ranges.size() || again->steps.size() != trace.steps.size()
        || again->lanes.size() != trace.lanes.size() || again->markers.size() != trace.markers.size()
        || again->reserved.size() != trace.reserved.size() || again->kernels.size() != trace.kernels.size())
        fail("a trace saved and read back", "lost or gained items");
    // The saved file summarized a chunk at a time gives the figures of the file read whole;
    // so do the figures stored in it, as convert stores them.
    try {
        const peaklens::FileSummary streamed = peaklens::summarizeFile(scratchFile());
        const std::string expected = peaklens::summaryToJson(*again, peaklens::summarize(*again), std::nullopt);
        if (peaklens::summaryToJson(*streamed.trace, streamed.summary, std::nullopt) != expected)
            fail("a saved trace summarized a chunk at a time", "differs from the trace read whole");
        peaklens::storeSummaryFigures(scratchFile());
        const peaklens::FileSummary stored = peaklens::summarizeFile(scratchFile());
        if (!stored.stored || peaklens::summaryToJson(*stored.trace, stored.summary, std::nullopt) != expected)
            fail("a saved trace summarized from its stored figures", "differs from the trace read whole");
    } catch (const peaklens::Error &error) {
        fail("a trace saved and read back could not be summarized", error.what());
    }
}

// The same edited file followed as if its writer were still at it: the follower goes
// through the same checks, so it may refuse the file only with an ImportError naming it, and
// what both accept holds the same rows; its running figures take them without failing.
void checkFollowed(const std::vector<unsigned char> &image, const peaklens::Trace *read)
{
    static const peaklens::fuzz::ScratchFolder folder({});
    static const std::string path = folder.path() / "followed.peaklens";
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
        return;
    std::fwrite(image.data(), 1, image.size(), file);
    std::fclose(file);
    try {
        peaklens::LoadBudget::Scope budget(path, image.size());
        peaklens::TraceFollower follower(path);
        const auto update = follower.poll();
        peaklens::LiveAnalysis analysis;
        peaklens::TraceGrowth growth = follower.growth(update);
        growth.restart = true;
        analysis.update(follower.trace(), growth);
        if (follower.poll().changedAnything())
            fail("a second poll of a file nobody writes", "found something new");
        if (read
            && (follower.trace().events.size() != read->events.size() || follower.trace().steps.size() != read->steps.size()
                || follower.trace().ranges.size() != read->ranges.size()))
            fail("a followed file", "holds other rows than the same file read whole");
    } catch (const peaklens::ImportError &error) {
        if (error.path() != path)
            fail("the follower's error names another file", error.what());
    } catch (const peaklens::Error &error) {
        fail("the follower threw an error that is not an ImportError", error.what());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const peaklens::fuzz::SqlMutator mutator(readSourceFile("resources/samples/training-step.peaklens"));
    const std::vector<unsigned char> image = mutator.run(data, size);
    std::shared_ptr<const peaklens::Trace> trace;
    try {
        // As loadTrace() reads a trace from a pipe: within a budget for the input's size.
        peaklens::LoadBudget::Scope budget("fuzz.peaklens", image.size());
        trace = peaklens::TraceReader::readImage("fuzz.peaklens",
                                                 std::span(reinterpret_cast<const char *>(image.data()), image.size()));
    } catch (const peaklens::ImportError &error) {
        if (error.path() != "fuzz.peaklens")
            fail("the reader's error names another file", error.what());
        checkFollowed(image, nullptr);
        return 0;
    } catch (const peaklens::Error &error) {
        // tracereader.h: whatever is wrong with a file, the error names it.
        fail("the reader threw an error that is not an ImportError", error.what());
    }
    checkRewritable(*trace);
    checkFollowed(image, trace.get());
    return 0;
}
