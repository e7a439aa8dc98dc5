// peaklens-cli: inspect, summarise and convert memory traces from the command line.
// Exit codes: 0 success, 2 bad input or usage (one sentence on stderr, nothing on stdout).

#include "clirunner.h"

#include <iostream>

int main(int argc, char **argv)
{
    return peaklens::cli::runCli(argc, argv, std::cout, std::cerr);
}
