// SPDX-License-Identifier: Apache-2.0
#include "memorytimeline.h"

#include "categoryledger.h"
#include "core/error.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"
#include "jsonscanner.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>

namespace peaklens {

namespace {

// The categories of the exported files: PARAMETER=0 ... AUTOGRAD_DETAIL=6, 7 for none.
// They are PeakLens's own category codes.
Category categoryAt(std::int64_t index)
{
    return index >= 0 && index < kProfilerCategoryCount ? static_cast<Category>(index) : Category::Unknown;
}

class TimelineImporter
{
public:
    TimelineImporter(const std::string &path, const Progress &progress)
        : m_path(path)
        , m_progress(progress)
        , m_ledger(m_builder.lane(Lane{}))
    {
        m_builder.setMeta(metakey::SourceFormat, "memory-timeline");
        m_builder.setMeta(metakey::SourcePath, path);
        m_builder.setMeta("device.note", "export_memory_timeline files do not name their device; cuda:0 is assumed");
    }

    std::shared_ptr<const Trace> run(const FileBytes &bytes)
    {
        simdjson::dom::parser parser;
        simdjson::dom::element root;
        if (auto error = parser.parse(bytes.data(), bytes.size(), false).get(root))
            JsonScanner::explainJsonError(bytes.view(), m_path, simdjson::error_message(error));
        simdjson::dom::array top;
        if (root.get_array().get(top))
            fail("is not a memory timeline: it is not a JSON list");
        if (isPlainForm(top))
            readPlain(top);
        else
            readRaw(top);
        for (const MemoryEvent &event : m_events)
            m_builder.addEvent(event);
        return m_builder.finish();
    }

private:
    [[noreturn]] void fail(const std::string &problem) const { throw ImportError(m_path, problem + "."); }

    static bool isPlainForm(simdjson::dom::array top)
    {
        if (top.size() != 2)
            return false;
        simdjson::dom::array times, sizes;
        if (top.at(0).get_array().get(times) || top.at(1).get_array().get(sizes))
            return false;
        if (sizes.size() == 0)
            return times.size() == 0;
        simdjson::dom::array row;
        return !sizes.at(0).get_array().get(row);
    }

    std::int64_t integer(simdjson::dom::element element, const char *what) const
    {
        double value = 0;
        std::int64_t integer = 0;
        if (!element.get_int64().get(integer))
            return integer;
        if (element.get_double().get(value) || !std::isfinite(value) || std::fabs(value) > 9e18)
            fail(std::string("is not a valid memory timeline: ") + what + " is not a number");
        return static_cast<std::int64_t>(std::llround(value));
    }

    // Plain files hold microseconds (older PyTorch wrote nanoseconds): epoch times tell
    // them apart by size; small relative times are taken as microseconds.
    static std::int64_t timeScale(std::int64_t largest, bool raw)
    {
        if (raw || largest > 100'000'000'000'000'000LL)
            return 1;
        return 1000;
    }

    void readPlain(simdjson::dom::array top)
    {
        m_builder.setMeta("timeline.form", "[times, sizes]");
        simdjson::dom::array times = top.at(0).get_array().value_unsafe();
        simdjson::dom::array sizes = top.at(1).get_array().value_unsafe();
        if (times.size() != sizes.size())
            fail("is not a valid memory timeline: it has " + std::to_string(times.size()) + " times but "
                 + std::to_string(sizes.size()) + " rows of sizes");
        std::vector<std::int64_t> timeValues;
        for (simdjson::dom::element t : times)
            timeValues.push_back(integer(t, "a time"));
        std::int64_t largest = 0;
        for (std::int64_t t : timeValues)
            largest = std::max(largest, t);
        const std::int64_t scale = timeScale(largest, false);

        std::array<std::int64_t, kProfilerCategoryCount> current{};
        std::size_t row = 0;
        for (simdjson::dom::element sizeRow : sizes) {
            simdjson::dom::array columns;
            if (sizeRow.get_array().get(columns))
                fail("is not a valid memory timeline: row " + std::to_string(row) + " of sizes is not a list");
            // Column 0 is always zero; column c + 1 holds category c.
            std::array<std::int64_t, kProfilerCategoryCount> next{};
            std::size_t column = 0;
            for (simdjson::dom::element value : columns) {
                if (column >= 1 && column <= kProfilerCategoryCount)
                    next[column - 1] = integer(value, "a size");
                ++column;
            }
            const std::int64_t t = checkedTime(timeValues[row], scale);
            // Shrinking categories first, so no moment looks higher than the row says.
            for (int pass = 0; pass < 2; ++pass) {
                for (int c = 0; c < kProfilerCategoryCount; ++c) {
                    const std::int64_t delta = next[c] - current[c];
                    if ((pass == 0 && delta < 0) || (pass == 1 && delta > 0))
                        m_ledger.apply(t, static_cast<Category>(c), delta, m_events);
                }
            }
            current = next;
            if ((++row & 0xFFFF) == 0)
                m_progress.tick(0.5 + 0.5 * static_cast<double>(row) / static_cast<double>(sizes.size()));
        }
    }

    void readRaw(simdjson::dom::array top)
    {
        m_builder.setMeta("timeline.form", "raw [time, action, bytes, category]");
        struct Entry
        {
            std::int64_t t;
            std::int64_t bytes;
            Category category;
        };
        std::vector<Entry> entries;
        std::int64_t earliest = INT64_MAX;
        std::size_t index = 0;
        for (simdjson::dom::element element : top) {
            simdjson::dom::array fields;
            if (element.get_array().get(fields) || fields.size() != 4)
                fail("is not a memory timeline: entry " + std::to_string(index)
                     + " is not a list of [time, action, bytes, category]");
            const std::int64_t t = integer(fields.at(0), "a time");
            const std::int64_t action = integer(fields.at(1), "an action");
            if (action < 1 || action > 4)
                fail("is not a valid memory timeline: entry " + std::to_string(index) + " has the unknown action "
                     + std::to_string(action));
            std::int64_t category = 7;
            if (!fields.at(3).is_null())
                category = integer(fields.at(3), "a category");
            entries.push_back({t, integer(fields.at(2), "a size"), categoryAt(category)});
            if (t >= 0)
                earliest = std::min(earliest, t);
            ++index;
        }
        if (earliest == INT64_MAX)
            earliest = 0;
        // In time order, not the file's; time -1 (memory that existed before profiling
        // began) first. Within one timestamp the file says only what holds after it (PyTorch
        // plots it so), so frees go first and no moment stands higher.
        std::stable_sort(entries.begin(), entries.end(),
                         [](const Entry &a, const Entry &b) { return a.t < b.t || (a.t == b.t && a.bytes < 0 && b.bytes >= 0); });
        for (const Entry &entry : entries)
            m_ledger.apply(checkedTime(entry.t < 0 ? earliest : entry.t, 1), entry.category, entry.bytes, m_events);
    }

    std::int64_t checkedTime(std::int64_t t, std::int64_t scale) const
    {
        if (t < 0 || t > INT64_MAX / scale)
            fail("is not a valid memory timeline: it has the time " + std::to_string(t));
        return t * scale;
    }

    std::string m_path;
    const Progress &m_progress;
    TraceBuilder m_builder;
    CategoryLedger m_ledger;
    std::vector<MemoryEvent> m_events;
};

} // namespace

bool looksLikeMemoryTimeline(std::string_view prefix)
{
    // "[[" after optional whitespace: a list of lists.
    std::size_t pos = prefix.find_first_not_of(" \t\r\n");
    if (pos == std::string_view::npos || prefix[pos] != '[')
        return false;
    pos = prefix.find_first_not_of(" \t\r\n", pos + 1);
    return pos != std::string_view::npos && prefix[pos] == '[';
}

std::shared_ptr<const Trace> importMemoryTimeline(const FileBytes &bytes, const std::string &path, const Progress &progress)
{
    return TimelineImporter(path, progress).run(bytes);
}

} // namespace peaklens
