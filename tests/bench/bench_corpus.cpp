// SPDX-License-Identifier: Apache-2.0
// bench_corpus [RUNS] FILE...: the time to open each file as the app and the CLI do (read
// and import it, then the peak, live set, sites, layer and step figures), and that with
// the JSON answer of `summary --json` written, RUNS times each; prints the medians and the
// ranges in milliseconds.

#include "core/analysis/tracesummary.h"
#include "core/import/traceloader.h"
#include "core/report/summaryjson.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    int first = 1, runs = 7;
    if (argc > 1 && std::atoi(argv[1]) > 0) {
        runs = std::atoi(argv[1]);
        first = 2;
    }
    const auto since = [](std::chrono::steady_clock::time_point begin) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    };
    for (int a = first; a < argc; ++a) {
        std::vector<double> open, answer;
        std::size_t events = 0, jsonBytes = 0;
        for (int r = 0; r < runs; ++r) {
            const auto begin = std::chrono::steady_clock::now();
            const auto trace = peaklens::loadTrace(argv[a]);
            const peaklens::TraceSummary summary = peaklens::summarize(*trace);
            open.push_back(since(begin));
            jsonBytes = peaklens::summaryToJson(*trace, summary, std::nullopt).size();
            answer.push_back(since(begin));
            events = trace->events.size();
        }
        std::sort(open.begin(), open.end());
        std::sort(answer.begin(), answer.end());
        std::printf("%s\t%zu events\t%.2f ms (%.2f-%.2f)\t%.2f ms (%.2f-%.2f), %zu B\n", argv[a], events, open[open.size() / 2],
                    open.front(), open.back(), answer[answer.size() / 2], answer.front(), answer.back(), jsonBytes);
    }
    return 0;
}
