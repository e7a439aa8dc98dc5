// SPDX-License-Identifier: Apache-2.0
// Fuzzes the report writers with hostile names: a small trace's structure with its layer
// paths and kinds, metadata, frames and kernel names (and the reported file names) taken
// from the input. Each output must hold what its format promises, whatever the names:
// HTML and SVG well-formed, with nothing hidden or reordering text; JSON that parses;
// CSV with one field per column and no formulas; all of it UTF-8.
#include "hostiletrace.h"
#include "outputcheck.h"

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

// A training step small enough to report many times a second, with what every part of a
// report needs: nested layers that form a checkpointable chain, a peak, call stacks with
// user and library frames, and an optimizer step.
constexpr std::string_view kSkeleton = R"(
meta description a small modelled step
layer embed kind=Embedding params=1MiB
layer blocks.0 kind=Block params=2MiB
layer blocks.1 kind=Block params=2MiB
layer blocks.0.attn kind=Attention params=1MiB
layer blocks.0.mlp kind=MLP params=1MiB
layer blocks.1.attn kind=Attention params=1MiB
layer blocks.1.mlp kind=MLP params=1MiB
layer head kind=Linear params=1MiB
alloc p0 6MiB parameter stack=main@train.py:88;__init__@model.py:120 @other:embed
begin step 1
+5us begin fwd:embed
alloc a0 1MiB activation stack=main@train.py:88;forward@model.py:140;embedding@torch/nn/functional.py:2210
+10us end fwd:embed
+2us begin fwd:blocks.0
+2us begin fwd:blocks.0.attn
alloc a1 2MiB activation stack=main@train.py:88;forward@model.py:71;linear@torch/nn/functional.py:1848
alloc t1 4MiB temporary stack=main@train.py:88;forward@model.py:74;matmul@model.py:74
free t1
alloc a2 1MiB activation stack=main@train.py:88;forward@model.py:80;linear@torch/nn/functional.py:1848
+20us end fwd:blocks.0.attn
+2us begin fwd:blocks.0.mlp
alloc a3 4MiB activation stack=main@train.py:88;forward@model.py:55;gelu@torch/nn/functional.py:1697
alloc a4 1MiB activation stack=main@train.py:88;forward@model.py:57;linear@torch/nn/functional.py:1848
+20us end fwd:blocks.0.mlp
+2us end fwd:blocks.0
+2us begin fwd:blocks.1
+2us begin fwd:blocks.1.attn
alloc a5 2MiB activation stack=main@train.py:88;forward@model.py:71;linear@torch/nn/functional.py:1848
alloc a6 1MiB activation stack=main@train.py:88;forward@model.py:80;linear@torch/nn/functional.py:1848
+20us end fwd:blocks.1.attn
+2us begin fwd:blocks.1.mlp
alloc a7 4MiB activation stack=main@train.py:88;forward@model.py:55;gelu@torch/nn/functional.py:1697
alloc a8 1MiB activation stack=main@train.py:88;forward@model.py:57;linear@torch/nn/functional.py:1848
+20us end fwd:blocks.1.mlp
+2us end fwd:blocks.1
+2us begin fwd:head
alloc a9 2MiB activation stack=main@train.py:88;forward@model.py:150;linear@torch/nn/functional.py:1848
+10us end fwd:head
+2us begin bwd:head
alloc g9 1MiB gradient stack=main@train.py:88;backward@torch/autograd/__init__.py:200
free a9
+10us end bwd:head
+2us begin bwd:blocks.1
+2us begin bwd:blocks.1.mlp
alloc g8 1MiB gradient stack=main@train.py:88;backward@torch/autograd/__init__.py:200
free a8
free a7
+20us end bwd:blocks.1.mlp
+2us begin bwd:blocks.1.attn
alloc g7 1MiB gradient stack=main@train.py:88;backward@torch/autograd/__init__.py:200
free a6
free a5
+20us end bwd:blocks.1.attn
+2us end bwd:blocks.1
+2us begin bwd:blocks.0
+2us begin bwd:blocks.0.mlp
alloc g6 1MiB gradient stack=main@train.py:88;backward@torch/autograd/__init__.py:200
free a4
free a3
+20us end bwd:blocks.0.mlp
+2us begin bwd:blocks.0.attn
alloc g5 1MiB gradient stack=main@train.py:88;backward@torch/autograd/__init__.py:200
free a2
free a1
+20us end bwd:blocks.0.attn
+2us end bwd:blocks.0
+2us begin bwd:embed
free a0
+10us end bwd:embed
+5us begin opt
alloc o1 6MiB optimizer_state stack=main@train.py:88;step@torch/optim/adamw.py:160 @opt:embed
+20us end opt
end step 1
)";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const peaklens::TracePtr skeleton = peaklens::parseTraceText(kSkeleton);
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
    static constexpr std::pair<peaklens::CsvTable, const char *> kTables[] = {{peaklens::CsvTable::Layers, "layers CSV"},
                                                                              {peaklens::CsvTable::Plans, "plans CSV"},
                                                                              {peaklens::CsvTable::Sites, "sites CSV"},
                                                                              {peaklens::CsvTable::Events, "events CSV"}};
    const auto [table, name] = input.PickValueInArray(kTables);
    checkCsv(name, peaklens::renderCsvReport(report, table));
    return 0;
}
