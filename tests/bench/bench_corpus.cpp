// SPDX-License-Identifier: Apache-2.0
// bench_corpus [RUNS] FILE...: the time to open each file as the app and the CLI do (read
// and import it, then the peak, live set, sites, layer and step figures), RUNS times
// each; prints the median and the range in milliseconds.

#include "core/analysis/tracesummary.h"
#include "core/import/traceloader.h"

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
    for (int a = first; a < argc; ++a) {
        std::vector<double> ms;
        std::size_t events = 0;
        for (int r = 0; r < runs; ++r) {
            const auto begin = std::chrono::steady_clock::now();
            const auto trace = peaklens::loadTrace(argv[a]);
            const peaklens::TraceSummary summary = peaklens::summarize(*trace);
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());
            events = trace->events.size();
            (void)summary;
        }
        std::sort(ms.begin(), ms.end());
        std::printf("%s\t%zu events\t%.2f ms (%.2f-%.2f)\n", argv[a], events, ms[ms.size() / 2], ms.front(), ms.back());
    }
    return 0;
}
