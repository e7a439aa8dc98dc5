// SPDX-License-Identifier: Apache-2.0
// peaklens-cli: inspect, summarise and convert memory traces from the command line.
// Exit codes: see "Exit status" in docs/cli.md, the one table of them (the man page's too).

#include "clirunner.h"

#include <exception>
#include <iostream>

int main(int argc, char **argv)
{
    // runCli answers every exception with one line; should writing that line throw in
    // turn, the exit code still says "failed" rather than abort()'s 134.
    try {
        return peaklens::cli::runCli(argc, argv, std::cout, std::cerr);
    } catch (...) {
        return 2;
    }
}
