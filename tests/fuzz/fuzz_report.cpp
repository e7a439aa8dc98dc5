// Fuzzes the report writers with hostile names: a real trace's structure with its layer
// paths and kinds, metadata, frames and kernel names (and the reported file names) taken
// from the input. Each output must hold what its format promises, whatever the names:
// HTML and SVG well-formed, with nothing hidden or reordering text; JSON that parses;
// CSV with one field per column and no formulas; all of it UTF-8.
#include "hostiletrace.h"
#include "outputcheck.h"
#include "sourcefile.h"

#include "core/error.h"
#include "core/report/htmlreport.h"
#include "core/report/reportdata.h"
#include "core/report/tablereport.h"
#include "core/trace/tracetext.h"
#include "core/trace/visibletext.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <string>

namespace {

[[noreturn]] void fail(const char *output, const std::string &problem, const std::string &text)
{
    std::fprintf(stderr, "fuzz_report: the %s output has %s\n", output, peaklens::visibleText(problem).c_str());
    std::fprintf(stderr, "  it begins: %s\n", peaklens::visibleText(text.substr(0, 400)).c_str());
    __builtin_trap();
}

void checkMarkup(const char *output, const std::string &text)
{
    if (std::string problem = peaklens::fuzz::hiddenTextProblem(text); !problem.empty())
        fail(output, problem, text);
    if (std::string problem = peaklens::fuzz::markupProblem(text); !problem.empty())
        fail(output, problem, text);
    // The report runs no scripts: any "<script" came from a name.
    for (std::size_t lt = text.find('<'); lt != std::string::npos; lt = text.find('<', lt + 1)) {
        std::string tag = text.substr(lt + 1, 7);
        for (char &c : tag)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (tag.starts_with("script") || tag.starts_with("/script"))
            fail(output, "a script tag at byte " + std::to_string(lt), text);
    }
}

void checkJson(const std::string &text, std::size_t runs)
{
    if (std::string problem = peaklens::fuzz::utf8Problem(text); !problem.empty())
        fail("JSON", problem, text);
    if (std::string problem = peaklens::fuzz::jsonReportProblem(text, runs); !problem.empty())
        fail("JSON", problem, text);
}

void checkCsv(const char *output, const std::string &text)
{
    if (std::string problem = peaklens::fuzz::utf8Problem(text); !problem.empty())
        fail(output, problem, text);
    if (std::string problem = peaklens::fuzz::csvProblem(text); !problem.empty())
        fail(output, problem, text);
}

std::string reportedPath(FuzzedDataProvider &input)
{
    // Half the time a plain name, so that the names inside the trace are tested alone.
    return input.ConsumeBool() ? "run.peaklens" : peaklens::fuzz::hostileText(input);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const peaklens::TracePtr skeleton = [] {
        const std::vector<unsigned char> text = readSourceFile("tests/data/modelled-step.pltxt");
        return peaklens::parseTraceText(std::string_view(reinterpret_cast<const char *>(text.data()), text.size()));
    }();
    FuzzedDataProvider input(data, size);
    peaklens::ReportData report;
    try {
        const peaklens::TracePtr trace = peaklens::fuzz::withHostileNames(*skeleton, input);
        std::vector<std::pair<std::string, peaklens::TracePtr>> traces{{reportedPath(input), trace}};
        if (input.ConsumeBool())
            traces.emplace_back(reportedPath(input), trace);
        std::optional<std::int64_t> budget;
        if (input.ConsumeBool())
            budget = input.ConsumeIntegralInRange<std::int64_t>(1, std::int64_t(1) << 40);
        report = peaklens::buildReport(traces, budget);
    } catch (const peaklens::Error &) {
        return 0; // a name the builder refuses: said clearly, as it should be
    }

    // One of the two HTML forms and one CSV table a run: all of them take long.
    if (input.ConsumeBool()) {
        checkMarkup("HTML", peaklens::renderHtmlReport(report));
    } else {
        const peaklens::HtmlWithCharts withCharts = peaklens::renderHtmlReportWithChartImages(report);
        checkMarkup("HTML (charts apart)", withCharts.html);
        for (const std::string &chart : withCharts.charts)
            checkMarkup("SVG chart", chart);
    }
    checkJson(peaklens::renderJsonReport(report), report.runs.size());
    static constexpr std::pair<peaklens::CsvTable, const char *> kTables[] = {
        {peaklens::CsvTable::Layers, "layers CSV"}, {peaklens::CsvTable::Plans, "plans CSV"},
        {peaklens::CsvTable::Sites, "sites CSV"}, {peaklens::CsvTable::Events, "events CSV"}};
    const auto [table, name] = input.PickValueInArray(kTables);
    checkCsv(name, peaklens::renderCsvReport(report, table));
    return 0;
}
