#include "filesummary.h"

#include "core/format/tracereader.h"
#include "core/trace/lifetimecategories.h"
#include "core/trace/loadbudget.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"
#include "traceloader.h"

#include <filesystem>

namespace peaklens {

namespace {

// Thrown through the reader to stop a pass whose events turn out not to be in time order.
struct NotInTimeOrder
{
};

// Thrown through the reader to stop a pass over a trace whose categories are worked out
// from lifetimes before they are known.
struct NeedsCategories
{
};

// Categories worked out from lifetimes, one byte per event, kAsStored where the event
// keeps its own: a pass of their own, as a full read works them out once all are read.
constexpr std::uint8_t kAsStored = 0xFF;

std::vector<std::uint8_t> lifetimeCategories(const std::string &path, const ImportProgress &progress)
{
    std::vector<std::uint8_t> categories;
    std::optional<LifetimeClassifier> classifier;
    const auto decide = [&categories](std::size_t index, Category category) {
        categories[index] = static_cast<std::uint8_t>(category);
    };
    // The classifier reads the trace's ranges and steps to its finish: the trace is kept.
    const auto streamed = TraceReader::stream(
        path,
        [&](const Trace &trace, const TraceReader::StreamStart &start) {
            LoadBudget::charge(start.events, "categories");
            categories.assign(start.events, kAsStored);
            classifier.emplace(trace);
        },
        [&](const Trace &, MemoryEvents &events, std::size_t first) { classifier->add(events, first, decide); }, progress);
    if (streamed && classifier)
        classifier->finish(decide);
    return categories;
}

// The peak PeakScan would choose, from the totals: the first device in order with the
// most allocated, when that is above nothing.
std::optional<SummaryScan::Peak> expectedFrom(const std::vector<TotalsPeak> &peaks)
{
    const TotalsPeak *best = nullptr;
    for (const TotalsPeak &peak : peaks) {
        if (peak.bytes > 0 && (!best || peak.bytes > best->bytes || (peak.bytes == best->bytes && peak.device < best->device)))
            best = &peak;
    }
    if (!best)
        return std::nullopt;
    return SummaryScan::Peak{best->device, static_cast<std::size_t>(best->eventIndex)};
}

struct Pass
{
    std::shared_ptr<const Trace> trace;
    std::optional<TraceSummary> summary;
    std::optional<SummaryScan::Peak> found;
};

// One pass over the file's events. `expected` null: as the file's totals say. Categories
// worked out from lifetimes are laid over the stored ones; without them, a trace that
// needs them stops the pass.
Pass streamOnce(const std::string &path, const std::optional<std::optional<SummaryScan::Peak>> &expected,
                const std::vector<std::uint8_t> *categories, const ImportProgress &progress)
{
    std::optional<SummaryScan> scan;
    std::int64_t firstNs = 0, lastNs = INT64_MIN;
    Pass pass;
    pass.trace = TraceReader::stream(
        path,
        [&](const Trace &trace, const TraceReader::StreamStart &start) {
            if (!categories && trace.metaValue(metakey::Categories) == "lifetime")
                throw NeedsCategories{};
            scan.emplace(trace, expected ? *expected : expectedFrom(start.peaks));
        },
        [&](const Trace &, MemoryEvents &events, std::size_t first) {
            if (events.empty())
                return;
            if (first == 0)
                firstNs = events.timeNs(0);
            // The full read sorts what it reads; a pass in file order equals it only when
            // the file is in order, and a span too long for the model is refused there.
            if (events.timeNs(0) < lastNs || !events.isSortedByTime()
                || events.timeNs(events.size() - 1) - firstNs > TraceBuilder::kMaxSpanNs)
                throw NotInTimeOrder{};
            lastNs = events.timeNs(events.size() - 1);
            if (categories) {
                for (std::size_t i = 0; i < events.size(); ++i) {
                    if (const std::uint8_t category = (*categories)[first + i]; category != kAsStored)
                        events.setCategory(i, static_cast<Category>(category));
                }
            }
            scan->add(events, first);
        },
        progress);
    if (pass.trace) {
        pass.summary = scan->finish();
        pass.found = scan->foundPeak();
    }
    return pass;
}

FileSummary summarizeWhole(const std::string &path, const ImportProgress &progress)
{
    FileSummary result;
    result.trace = loadTrace(path, progress);
    result.summary = summarize(*result.trace);
    return result;
}

} // namespace

FileSummary summarizeFile(const std::string &path, const ImportProgress &progress)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || detectFormat(path) != TraceFormat::Native)
        return summarizeWhole(path, progress);
    try {
        LoadBudget::Scope budget(path, std::filesystem::file_size(path, ec));
        std::optional<std::vector<std::uint8_t>> categories;
        const auto run = [&](const std::optional<std::optional<SummaryScan::Peak>> &expected) {
            for (;;) {
                try {
                    return streamOnce(path, expected, categories ? &*categories : nullptr, progress);
                } catch (const NeedsCategories &) {
                    categories = lifetimeCategories(path, progress);
                }
            }
        };
        Pass pass = run(std::nullopt);
        if (pass.trace && !pass.summary) // the totals pointed elsewhere (damaged): once more, told
            pass = run(pass.found);
        if (pass.summary)
            return FileSummary{pass.trace, std::move(*pass.summary), true};
    } catch (const NotInTimeOrder &) {
    }
    return summarizeWhole(path, progress);
}

} // namespace peaklens
